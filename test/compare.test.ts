// suite: timing
// End to end: `coordinator compare` of two runs of the same plan against engine-sim, one with a
// slower first token (--ttft-ms 40 → 80), gating on the figures --gate-on names (TTFT p50 and
// p95), reports the TTFT regression with an interval excluding zero and exits 5 with
// --fail-on-regression, and reports the rest without gating; by default only the SLO figure gates;
// two identical runs pass the gate; runs of different plans are refused unless told.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../shared/errors.js';
import { constantRatePlan, onlyRunDir, readRunJson, runCoordinator, startNode, tempDir, writePlan } from './harness.js';

const compare = (args: readonly string[]) => startNode('coordinator/main.js', ['compare', ...args]).done;

const work = tempDir();
const plan = constantRatePlan('compare', 3, 20);
plan.classes[0]!.slo = { ttft_p95_ms: 1000 };

async function runWith(name: string, ttftMs: number, p = plan): Promise<string> {
  const r = await runCoordinator([
    '--plan',
    writePlan(work, p, `${name}.json`),
    '--out',
    join(work, name),
    '--quiet',
    `--sim-arg=--ttft-ms=${ttftMs}`,
    '--sim-arg=--itl-ms=2',
  ]);
  expect(r.code, r.stderr).toBe(ExitCode.OK);
  return onlyRunDir(join(work, name));
}

describe('coordinator compare', () => {
  let base: string;
  let same: string;
  let slow: string;
  beforeAll(async () => {
    base = await runWith('base', 40);
    same = await runWith('same', 40);
    slow = await runWith('slow', 80);
  }, 120_000);

  it('reports the TTFT regression on the gating figure with an interval excluding zero, and exits 5 with --fail-on-regression', async () => {
    const out = join(work, 'cmp-slow');
    const r = await compare([base, slow, '--out', out, '--fail-on-regression', '--gate-on', 'ttft_p50_ms,ttft_p95_ms']);
    expect(r.code, r.stderr + r.stdout).toBe(ExitCode.REGRESSED);
    const c = JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8'));
    expect(c).toMatchObject({
      schema: 'loadfleet.comparison/v1',
      method: 'block-bootstrap-one-run',
      comparable: { same_plan_and_schedule: true },
      gating: ['rt/all/ttft_p50_ms', 'rt/all/ttft_p95_ms'],
    });
    const p50 = c.classes.rt.all.find((f: any) => f.figure === 'ttft_p50_ms');
    const p95 = c.classes.rt.all.find((f: any) => f.figure === 'ttft_p95_ms');
    console.log(`ttft p50 ${p50.baseline} → ${p50.candidate} ms, Δ ${p50.delta} [${p50.interval.low}, ${p50.interval.high}]`);
    console.log(
      `ttft p95 ${p95.baseline} → ${p95.candidate} ms, Δ ${p95.delta} [${p95.interval.low}, ${p95.interval.high}], detectable ${p95.detectable_change}`,
    );
    expect(p50).toMatchObject({ gating: true, verdict: 'regressed' });
    expect(p50.interval.low).toBeGreaterThan(0);
    expect(p50.p_worse_adjusted).toBeLessThan(0.05);
    expect(p50.delta).toBeGreaterThan(20); // engine-sim's first token 40 ms later, less what scheduling blurs
    expect(p50.detectable_change).toBeLessThan(p50.delta);
    // The p95 of 60 requests is read at its 57th: it gates too, and states how large a change it could see.
    expect(p95).toMatchObject({ gating: true });
    expect(p95.detectable_change).toBeGreaterThan(0);
    expect(c.regressed).toContain('rt/all/ttft_p50_ms');
    expect(c.reported.regressed).toContain('rt/all/e2e_p50_ms');
    expect(c.definitions.method).toMatch(/block-bootstrap-one-run/);
    expect(r.stdout).toMatch(/^ {2}rt {9}all {6}ttft_p50_ms {3}\* .* REGRESSED {2}detectable ≥ /m);
    expect(r.stdout).toMatch(/exit 5 \(--fail-on-regression\): gating figures regressed: .*rt\/all\/ttft_p50_ms/);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toMatch(/data-chart="compare-rt-ttft"/);
    expect(html).toMatch(/baseline.*candidate/s);
  }, 60_000);

  // One pair only shows the pass path; the false-alarm rate is measured over many pairs
  // (results/compare/calibration.test.ts, test/compare-calibration.test.ts). Non-gating figures
  // are each read at their own level, so one of many may read "regressed" in any pair: they are
  // logged, not asserted.
  it('passes two identical runs through the gate (its one SLO figure)', async () => {
    const out = join(work, 'cmp-same');
    const r = await compare([base, same, '--out', out, '--fail-on-regression']);
    const c = JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8'));
    const ttft = c.classes.rt.all.filter((f: any) => /^(ttft|e2e)_p(50|95)_ms$/.test(f.figure));
    console.log(
      ttft.map((f: any) => `${f.figure} ${f.baseline} → ${f.candidate} [${f.interval.low}, ${f.interval.high}] ${f.verdict}`).join('; '),
    );
    expect(c.classes.rt.all.find((f: any) => f.figure === 'success_rate').verdict).toBe('within_noise');
    expect(r.code, r.stdout).toBe(ExitCode.OK);
    expect(c.regressed).toEqual([]);
    // Without --gate-on, the class's SLO figure alone gates.
    expect(c.gating).toEqual(['rt/all/ttft_p95_ms']);
    // Goodput counted from requests.ndjson as run.json counts it.
    expect(readRunJson(base).classes.rt.windows.all.goodput_requests).toBeGreaterThan(0);
  }, 60_000);

  it('refuses --resamples too few for Holm over the gating figures, and writes nothing', async () => {
    const six = 'ttft_p50_ms,ttft_p95_ms,ttft_p99_ms,e2e_p50_ms,e2e_p95_ms,e2e_p99_ms';
    const r = await compare([base, slow, '--out', join(work, 'cmp-few'), '--gate-on', six, '--resamples', '100', '--fail-on-regression']);
    expect(r.code).toBe(ExitCode.INVALID_INPUT);
    expect(r.stderr).toMatch(/--resamples 100 is too few for 6 gating figures/);
    expect(r.stderr).toMatch(/use --resamples 120 or more/);
    expect(existsSync(join(work, 'cmp-few'))).toBe(false);
    const enough = await compare([
      base,
      slow,
      '--out',
      join(work, 'cmp-few'),
      '--gate-on',
      six,
      '--resamples',
      '120',
      '--fail-on-regression',
    ]);
    expect(enough.code, enough.stderr).toBe(ExitCode.REGRESSED);
  }, 60_000);

  it('refuses runs of different plans, and compares them when told', async () => {
    const other = await runWith('other', 40, { ...plan, seed: 2 });
    const r = await compare([base, other, '--out', join(work, 'cmp-other')]);
    expect(r.code).toBe(ExitCode.INVALID_INPUT);
    expect(r.stderr).toMatch(/LF_NOT_COMPARABLE/);
    expect(r.stderr).toMatch(/different plans/);
    expect(existsSync(join(work, 'cmp-other'))).toBe(false);
    const told = await compare([base, other, '--out', join(work, 'cmp-other'), '--allow-different-plans']);
    expect(told.code, told.stderr).toBe(ExitCode.OK);
    expect(JSON.parse(readFileSync(join(work, 'cmp-other', 'comparison.json'), 'utf8')).comparable.same_plan_and_schedule).toBe(false);
  }, 60_000);
});
