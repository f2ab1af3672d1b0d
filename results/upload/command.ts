// `coordinator upload DIR s3://bucket/prefix`: copies a run (or sweep, or experiment) directory to
// S3-compatible object storage with the standard AWS credentials from the environment, so results
// outlive the machine or cluster that produced them. deploy/bin/loadfleet runs it after a
// coordinator when $LOADFLEET_UPLOAD_URL is set.
import { stat } from 'node:fs/promises';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import { resolveCredentials } from './credentials.js';
import { parseS3Url, s3Target } from './s3-target.js';
import { uploadDir } from './upload-dir.js';

export async function uploadCommand(dir: string, url: string, print: (line: string) => void): Promise<number> {
  parseS3Url(url); // a wrong URL is refused before any credentials are fetched
  const target = s3Target(url, process.env, await resolveCredentials(process.env));
  const isDir = await stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) throw new LoadfleetError(ErrorCode.UPLOAD_FAILED, `${dir} is not a directory`, { exitCode: ExitCode.INVALID_INPUT });
  // Files larger than the part size go up in parts ($LOADFLEET_UPLOAD_PART_MIB, default 64, at least 5).
  const partMiB = Number(process.env['LOADFLEET_UPLOAD_PART_MIB'] || 64);
  await uploadDir(dir, target, print, partMiB * 1024 ** 2);
  return ExitCode.OK;
}
