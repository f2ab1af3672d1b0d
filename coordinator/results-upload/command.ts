// `coordinator upload DIR s3://bucket/prefix`: copies a run (or sweep, or experiment) directory to
// S3-compatible object storage with the standard AWS credentials from the environment, so results
// outlive the machine or cluster that produced them. deploy/bin/loadfleet runs it after a
// coordinator when $LOADFLEET_UPLOAD_URL is set.
import { stat } from 'node:fs/promises';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import { s3Target } from './s3-target.js';
import { uploadDir } from './upload-dir.js';

export async function uploadCommand(dir: string, url: string, print: (line: string) => void): Promise<number> {
  const target = s3Target(url, process.env);
  const isDir = await stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) throw new LoadfleetError(ErrorCode.UPLOAD_FAILED, `${dir} is not a directory`, { exitCode: ExitCode.INVALID_INPUT });
  await uploadDir(dir, target, print);
  return ExitCode.OK;
}
