// End to end: the SLO verdict comes first in the summary, and --fail-on-slo turns a missed SLO
// into its own exit code (4) while a met one still exits 0 — what a CI pipeline gates on.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../shared/errors.js';
import { constantRatePlan, onlyRunDir, readRunJson, runCoordinator, tempDir, writePlan } from './harness.js';

// The simple engine answers its first token after 60 ms: a 20 ms bound is missed, 2 s is met.
const SIM = ['--sim-arg=--ttft-ms=60', '--sim-arg=--itl-ms=2'];

function plan(ttftBoundMs: number) {
  const p = constantRatePlan('slo-gate', 3, 10);
  p.classes[0]!.slo = { ttft_p95_ms: ttftBoundMs, success_rate_min: 0.99 };
  p.windows = [{ name: 'middle', start_s: 1, end_s: 2 }];
  return p;
}

describe('--fail-on-slo', () => {
  it('prints the missed verdict first and exits with SLO_MISSED; a met SLO exits 0', async () => {
    const work = tempDir();
    const missed = await runCoordinator([
      '--plan',
      writePlan(work, plan(20), 'missed.json'),
      '--out',
      join(work, 'missed'),
      '--quiet',
      '--fail-on-slo',
      ...SIM,
    ]);
    expect(missed.code, missed.stderr).toBe(ExitCode.SLO_MISSED);
    const lines = missed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^run \S+: (completed|degraded)/);
    expect(lines[1]).toMatch(/^ {2}rt: SLO MISSED in middle \(also the whole run\) — p95 TTFT \d+(\.\d+)? ms > 20 ms; success 100% ≥ 99%$/);
    expect(missed.stderr).toMatch(/exit 4 \(--fail-on-slo\): SLO missed by rt \(in all, middle\)/);
    const run = readRunJson(onlyRunDir(join(work, 'missed')));
    expect(run.classes.rt.slo_verdict).toMatchObject({ verdict: 'missed', missed_in: ['all', 'middle'] });
    const crit = run.classes.rt.slo_verdict.windows.middle.criteria[0];
    expect(crit).toMatchObject({ criterion: 'ttft_p95_ms', bound: 20, comparison: '<=', met: false });
    expect(crit.figure).toBeGreaterThan(50);
    expect(run.classes.rt.windows.all.goodput_requests).toBe(0);
    expect(run.field_definitions['classes.<c>.windows.<w>.goodput_rps']).toMatch(/different|verdict/);

    // Without the flag the same miss is reported, not gated: exit 0.
    const ungated = await runCoordinator([
      '--plan',
      writePlan(work, plan(20), 'ungated.json'),
      '--out',
      join(work, 'ungated'),
      '--quiet',
      ...SIM,
    ]);
    expect(ungated.code, ungated.stderr).toBe(ExitCode.OK);
    expect(ungated.stdout).toMatch(/^ {2}rt: SLO MISSED in middle/m);

    const met = await runCoordinator([
      '--plan',
      writePlan(work, plan(2000), 'met.json'),
      '--out',
      join(work, 'met'),
      '--quiet',
      '--fail-on-slo',
      ...SIM,
    ]);
    expect(met.code, met.stderr).toBe(ExitCode.OK);
    expect(met.stdout).toMatch(/^ {2}rt: SLO met in every window — p95 TTFT \d+(\.\d+)? ms ≤ 2,000 ms; success 100% ≥ 99% \(whole run\)$/m);
    const metRun = readRunJson(onlyRunDir(join(work, 'met')));
    expect(metRun.classes.rt.windows.all.goodput_requests).toBe(30);
    expect(metRun.classes.rt.windows.all.goodput_rps).toBeGreaterThan(0);
  }, 90_000);
});
