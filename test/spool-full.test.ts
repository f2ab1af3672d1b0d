// An agent whose spool directory fills up (ENOSPC on a 64 KiB tmpfs) mid-run: a finished request
// could no longer be kept on disk, so the agent stops offering load, hands over what it finished
// over the link, says why naming the path and the errno, and the run records that reason.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { constantRatePlan, listeningCoordinator, onlyRunDir, readRequests, readRunJson, startNode, tempDir, writePlan } from './harness.js';
import { skipFor } from './require.js';

const work = tempDir();
const full = join(work, 'spool');

const tmpfs = (): string | null => {
  if (process.platform !== 'linux') return 'Linux tmpfs';
  if (process.getuid?.() !== 0) return 'root (mount -t tmpfs)';
  mkdirSync(full, { recursive: true });
  return spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', full]).status === 0 ? null : 'mount -t tmpfs';
};

describe.skipIf(skipFor('a full spool directory', tmpfs()))('a full spool directory on an agent', () => {
  afterAll(() => {
    execFileSync('umount', [full]);
  });

  it('stops the load, hands over what it finished, and the run names the path and ENOSPC', async () => {
    const env = { LOADFLEET_TOKEN: 'full' };
    // 20 req/s for 20 s with 64 output tokens: each spooled request (its record and its gaps) is
    // ~1.5 KB, so 64 KiB fills within the first few seconds, long before the plan's 400 requests.
    const plan = constantRatePlan('full', 20, 20, { input_tokens: 16, output_tokens: 64 });
    const { coord, url } = await listeningCoordinator(['--agents', '1', '--plan', writePlan(work, plan), '--out', join(work, 'out')], env);
    const startedAt = Date.now();
    const agent = startNode('agent/main.js', ['--coordinator', url, '--id', 'filled', '--spool-dir', full], env);
    const [res, left] = await Promise.all([coord.done, agent.done]);
    expect(Date.now() - startedAt, 'it stopped, not at the end of the 20 s plan').toBeLessThan(18_000);
    // The agent said why, naming the file and the errno.
    expect(left.stderr).toMatch(
      new RegExp(
        `the load stopped early: error LF_SPOOL_WRITE: the spool ${full}/filled\\.\\S+\\.spool\\.ndjson cannot be written \\(ENOSPC: `,
      ),
    );
    expect(left.code, left.stderr).toBe(0);
    // The run records the agent's reason: the only agent stopped early, beyond --max-agent-loss 0.
    expect(res.code, res.stderr).toBe(3);
    const dir = onlyRunDir(join(work, 'out'));
    const run = readRunJson(dir);
    expect(run.status).toBe('aborted');
    expect(run.status_reason).toMatch(
      /agent filled was lost \(error LF_SPOOL_WRITE: the spool \S+ cannot be written \(ENOSPC: .*; it handed over its \d+ requests\)/,
    );
    // What it finished is in the run, once each: none lost with the disk.
    const rows = readRequests(dir);
    console.log(
      `spool full: ${JSON.stringify({ run_wall_ms: Date.now() - startedAt, rows: rows.length, status_reason: run.status_reason })}`,
    );
    const handed = Number(/it handed over its (\d+) requests/.exec(run.status_reason)![1]);
    expect(rows.length).toBe(handed);
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.length).toBeLessThan(400);
    expect(new Set(rows.map((r) => r.request_index)).size).toBe(rows.length);
  }, 60_000);
});
