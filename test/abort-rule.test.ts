// End to end: a plan abort rule ends an overloaded run early — engine-sim rejecting 90% with 429,
// a 30 s plan, error_share_above 0.5 for 2 s — with status aborted, the rule in its reason, exit 3
// and every artifact written.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../shared/errors.js';
import { constantRatePlan, onlyRunDir, readRequests, readRunJson, runCoordinator, tempDir, writePlan } from './harness.js';

describe('abort rules', () => {
  it('stop an overloaded run early with the rule that fired and complete artifacts', async () => {
    const work = tempDir();
    const plan = { ...constantRatePlan('abort-rule', 30, 20), abort: { error_share_above: 0.5, for_s: 2, window_s: 2, min_requests: 5 } };
    const started = Date.now();
    const r = await runCoordinator([
      '--plan',
      writePlan(work, plan),
      '--out',
      join(work, 'out'),
      '--quiet',
      '--sim-arg=--fault=429-rate=0.9',
    ]);
    const wallS = (Date.now() - started) / 1000;
    expect(r.code, r.stderr).toBe(ExitCode.ABORTED);
    const dir = onlyRunDir(join(work, 'out'));
    const run = readRunJson(dir);
    console.log(`aborted after ${run.wall_clock_ms} ms of a 30 s plan (process ${wallS.toFixed(1)} s): ${run.status_reason}`);
    expect(run.status).toBe('aborted');
    expect(run.status_reason).toMatch(
      /^abort rule abort\.error_share_above: class rt failed \d+ of \d+ requests \(\d+\.\d% > 50%\) for 2 s \(window 2 s\)/,
    );
    // Early: the rule needs ~2 s of window and 2 s exceeded; far from the plan's 30 s.
    expect(run.wall_clock_ms).toBeLessThan(15_000);
    for (const f of ['run.json', 'requests.ndjson', 'histograms.hlog', 'traffic.csv']) expect(existsSync(join(dir, f)), f).toBe(true);
    const rows = readRequests(dir);
    expect(rows.length).toBe(run.requests);
    expect(run.requests).toBeLessThan(600);
    expect(run.classes.rt.http_429).toBeGreaterThan(run.classes.rt.completed);
    expect(run.slo_proof.checks.find((c: any) => c.name === 'no_safety_ceiling_hit').reason).toMatch(/aborted: abort rule/);
  }, 60_000);
});
