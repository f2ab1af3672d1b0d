// End to end: `coordinator compare` of two runs of the same plan against engine-sim, one with a
// slower first token (--ttft-ms 40 → 80), reports the TTFT regression with an interval excluding
// zero and exits 5 with --fail-on-regression; two identical runs are within noise; runs of
// different plans are refused unless told.
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

  it('reports the TTFT regression with an interval excluding zero, and exits 5 with --fail-on-regression', async () => {
    const out = join(work, 'cmp-slow');
    const r = await compare([base, slow, '--out', out, '--fail-on-regression']);
    expect(r.code, r.stderr + r.stdout).toBe(ExitCode.REGRESSED);
    const c = JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8'));
    expect(c).toMatchObject({
      schema: 'loadfleet.comparison/v1',
      method: 'bootstrap-over-requests',
      comparable: { same_plan_and_schedule: true },
    });
    const p50 = c.classes.rt.all.find((f: any) => f.figure === 'ttft_p50_ms');
    console.log(`ttft p50 ${p50.baseline} → ${p50.candidate} ms, Δ ${p50.delta} [${p50.interval.low}, ${p50.interval.high}]`);
    expect(p50.verdict).toBe('regressed');
    expect(p50.interval.low).toBeGreaterThan(0);
    expect(p50.delta).toBeGreaterThan(20); // engine-sim's first token 40 ms later, less what scheduling blurs
    expect(c.regressed).toContain('rt/all/ttft_p50_ms');
    expect(c.definitions.method).toMatch(/bootstrap-over-requests/);
    expect(r.stdout).toMatch(/^ {2}rt {9}all {6}ttft_p50_ms .* REGRESSED$/m);
    expect(r.stdout).toMatch(/exit 5 \(--fail-on-regression\): regressed .*rt\/all\/ttft_p50_ms/);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toMatch(/data-chart="compare-rt-ttft"/);
    expect(html).toMatch(/baseline.*candidate/s);
  }, 60_000);

  it('finds two identical runs within noise on TTFT and e2e (every interval holding zero or below the threshold)', async () => {
    const out = join(work, 'cmp-same');
    const r = await compare([base, same, '--out', out, '--fail-on-regression']);
    const c = JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8'));
    const ttft = c.classes.rt.all.filter((f: any) => /^(ttft|e2e)_p(50|95)_ms$/.test(f.figure));
    console.log(
      ttft.map((f: any) => `${f.figure} ${f.baseline} → ${f.candidate} [${f.interval.low}, ${f.interval.high}] ${f.verdict}`).join('; '),
    );
    for (const f of ttft) expect(f.verdict, f.figure).toBe('within_noise');
    expect(c.classes.rt.all.find((f: any) => f.figure === 'success_rate').verdict).toBe('within_noise');
    expect(r.code, r.stdout).toBe(c.regressed.length > 0 ? ExitCode.REGRESSED : ExitCode.OK);
    // Goodput counted from requests.ndjson as run.json counts it.
    expect(readRunJson(base).classes.rt.windows.all.goodput_requests).toBeGreaterThan(0);
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
