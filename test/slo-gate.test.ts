// End to end: the SLO verdict comes first in the summary, and --fail-on-slo turns a missed SLO
// into its own exit code (4) while a met one still exits 0 — what a CI pipeline gates on.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../shared/errors.js';
import { constantRatePlan, onlyRunDir, readRunJson, runCoordinator, startSim, tempDir, writePlan } from './harness.js';

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
    // engine-sim without its gateway, no class sending a fairness header: that check does not apply,
    // so the gate can pass, and the summary says which checks applied and why not the others.
    expect(metRun.data_quality.not_applicable).toEqual([
      { name: 'headers_honoured', reason: 'no class that sent requests carries a fairness id header' },
    ]);
    expect(metRun.data_quality.applied).not.toContain('headers_honoured');
    expect(met.stdout).toMatch(
      /^ {2}data quality: (valid|NOT valid \(.*;) \(?6 of 7 checks applied; not applicable — headers_honoured: no class/m,
    );
  }, 90_000);
});

// Failures count, and what can't be measured is not a miss.
describe('--fail-on-slo judges failures and the unmeasurable', () => {
  it('a class whose server rejects 90% with 429 misses its latency-only SLO and exits 4', async () => {
    const work = tempDir();
    const p = constantRatePlan('slo-429', 2, 10);
    p.classes[0]!.slo = { ttft_p95_ms: 500 };
    const r = await runCoordinator([
      '--plan',
      writePlan(work, p),
      '--out',
      join(work, 'out'),
      '--quiet',
      '--fail-on-slo',
      '--sim-arg=--ttft-ms=10',
      '--sim-arg=--fault=429-rate=0.9',
    ]);
    expect(r.code, r.stderr).toBe(ExitCode.SLO_MISSED);
    const run = readRunJson(onlyRunDir(join(work, 'out')));
    const all = run.classes.rt.windows.all;
    expect(all.http_429).toBeGreaterThan(10); // ~18 of 20: the seeded fault draw
    // The successes were fast: the successful-only p95 meets 500 ms, yet the verdict, ranking failures +∞, misses.
    expect(all.ttft_p95_ms).toBeLessThan(500);
    const crit = run.classes.rt.slo_verdict.windows.all.criteria[0];
    expect(crit).toMatchObject({ criterion: 'ttft_p95_ms', met: false, on_failure: true, figure: null, ranked: 20 });
    expect(crit.failed).toBe(all.failed);
    expect(r.stdout).toMatch(/rt: SLO MISSED over the whole run — p95 TTFT a failed request \(\d+ of 20 failed\) > 500 ms/);
    expect(r.stderr).toMatch(/exit 4 \(--fail-on-slo\): SLO missed by rt \(in all\)/);
    expect(all.goodput_requests).toBe(all.completed);
    expect(all.goodput_rps).toBeLessThanOrEqual(all.throughput_rps);
  }, 60_000);

  it('a TPOT-only SLO with 90% 429s and one-token answers is missed and exits 4: the failures decide the p95', async () => {
    const work = tempDir();
    // One output token: no success can carry a TPOT, yet the 429s put the p95 on +∞ whatever they carried.
    const p = constantRatePlan('slo-tpot-429', 2, 10, { input_tokens: 16, output_tokens: 1 });
    p.classes[0]!.slo = { tpot_p95_ms: 50 };
    const r = await runCoordinator([
      '--plan',
      writePlan(work, p),
      '--out',
      join(work, 'out'),
      '--quiet',
      '--fail-on-slo',
      '--sim-arg=--ttft-ms=10',
      '--sim-arg=--fault=429-rate=0.9',
    ]);
    expect(r.code, r.stderr).toBe(ExitCode.SLO_MISSED);
    const run = readRunJson(onlyRunDir(join(work, 'out')));
    const all = run.classes.rt.windows.all;
    expect(all.http_429).toBeGreaterThan(10);
    expect(all.tpot_samples).toBe(0); // nothing measured a TPOT
    const crit = run.classes.rt.slo_verdict.windows.all.criteria[0];
    expect(crit).toMatchObject({ criterion: 'tpot_p95_ms', met: false, on_failure: true, figure: null, reason: null });
    expect(crit.failed).toBe(all.failed);
    expect(crit.unmeasured).toBe(all.completed);
    expect(run.classes.rt.slo_verdict).toMatchObject({ verdict: 'missed', not_evaluable_in: [] });
    expect(r.stdout).toMatch(/rt: SLO MISSED over the whole run — p95 TPOT a failed request \(\d+ of 20 failed\) > 50 ms/);
    expect(r.stderr).toMatch(/exit 4 \(--fail-on-slo\): SLO missed by rt \(in all\)/);
  }, 60_000);

  describe('a server without usage and a TPOT bound', () => {
    let sim: { baseUrl: string; stop(): void };
    beforeAll(async () => {
      sim = await startSim(['--fault', 'no-usage-rate=1', '--ttft-ms', '10', '--itl-ms', '2']);
    });
    afterAll(() => sim?.stop());

    function plan() {
      const p = constantRatePlan('slo-no-usage', 2, 5);
      p.target = { base_url: sim.baseUrl, api: 'chat', model: 'loadfleet-sim', timeout_s: 5 };
      p.classes[0]!.slo = { tpot_p95_ms: 50, success_rate_min: 0.99 };
      return p;
    }

    it('is not_evaluable with the reason; --fail-on-slo states it and passes, --fail-on-not-evaluable exits 4', async () => {
      const work = tempDir();
      const r = await runCoordinator(['--plan', writePlan(work, plan()), '--out', join(work, 'a'), '--quiet', '--fail-on-slo']);
      expect(r.code, r.stderr).toBe(ExitCode.OK);
      const run = readRunJson(onlyRunDir(join(work, 'a')));
      const v = run.classes.rt.slo_verdict;
      expect(v).toMatchObject({ verdict: 'not_evaluable', missed_in: [], not_evaluable_in: ['all'] });
      expect(v.windows.all.criteria[0]).toMatchObject({ criterion: 'tpot_p95_ms', met: null, unmeasured: 10 });
      expect(v.windows.all.reason).toMatch(
        /TPOT needs 2 or more counted output tokens; of 10 successful requests, 10 without counted output tokens/,
      );
      expect(v.windows.all.criteria[1]).toMatchObject({ criterion: 'success_rate_min', figure: 1, met: true });
      expect(r.stdout).toMatch(/rt: SLO not evaluable — p95 TPOT: TPOT needs 2 or more/);
      expect(r.stderr).toMatch(/exit 0 \(--fail-on-slo\): no SLO missed; not evaluable, so not gated/);
      // The 10 successes were good for their user: goodput does not hold the unmeasurable bound against them.
      expect(run.classes.rt.windows.all.goodput_requests).toBe(10);

      const strict = await runCoordinator([
        '--plan',
        writePlan(work, plan(), 'strict.json'),
        '--out',
        join(work, 'b'),
        '--quiet',
        '--fail-on-slo',
        '--fail-on-not-evaluable',
      ]);
      expect(strict.code, strict.stderr).toBe(ExitCode.SLO_MISSED);
      expect(strict.stderr).toMatch(/exit 4 \(--fail-on-slo --fail-on-not-evaluable\): SLO not evaluable for rt/);
    }, 60_000);
  });
});
