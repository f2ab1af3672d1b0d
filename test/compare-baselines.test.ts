// suite: timing
// End to end: `coordinator compare` with a baseline from another tool. A run against engine-sim is
// written out as vLLM bench serve (per request and aggregate), GuideLLM (with and without its
// requests) and AIPerf (profile_export.jsonl and profile_export_aiperf.json) would have recorded
// it; each is compared with a clearly slower run (first token 40 → 80 ms), which fails the gate
// (exit 5), and with an equal run, which passes. The run's own benchmark-report.yaml round-trips
// as a baseline, and a malformed baseline is refused with its problems.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../shared/errors.js';
import { writeForeignBaselines } from './foreign-baselines.js';
import { constantRatePlan, onlyRunDir, runCoordinator, startNode, tempDir, writePlan } from './harness.js';

const compare = (args: readonly string[]) => startNode('coordinator/main.js', ['compare', ...args]).done;

const work = tempDir();
const plan = constantRatePlan('baselines', 15, 3);

async function runWith(name: string, ttftMs: number): Promise<string> {
  const r = await runCoordinator([
    '--plan',
    writePlan(work, plan, `${name}.json`),
    '--out',
    join(work, name),
    '--quiet',
    `--sim-arg=--ttft-ms=${ttftMs}`,
    '--sim-arg=--itl-ms=2',
  ]);
  expect(r.code, r.stderr).toBe(ExitCode.OK);
  return onlyRunDir(join(work, name));
}

const GATE = ['--fail-on-regression', '--gate-on', 'ttft_p50_ms,success_rate'];

describe('coordinator compare with a baseline from another tool', () => {
  let same: string;
  let slow: string;
  let base: string;
  let files: Record<string, string>;
  beforeAll(async () => {
    base = await runWith('base', 40);
    same = await runWith('same', 40);
    slow = await runWith('slow', 80);
    files = writeForeignBaselines(base, work);
  }, 180_000);

  const kinds = [
    ['vllm-detailed', 'vLLM bench serve', 'per-request'],
    ['vllm-aggregate', 'vLLM bench serve', 'aggregate'],
    ['guidellm-requests', 'GuideLLM', 'per-request'],
    ['guidellm-aggregate', 'GuideLLM', 'aggregate'],
    ['aiperf-records', 'AIPerf', 'per-request'],
    ['aiperf-aggregate', 'AIPerf', 'aggregate'],
  ] as const;

  it.each(kinds)(
    '%s: a slower candidate fails the gate, an equal one passes',
    async (kind, tool, data) => {
      const out = join(work, `cmp-${kind}`);
      const r = await compare([files[kind]!, slow, '--out', out, ...GATE]);
      expect(r.code, r.stderr + r.stdout).toBe(ExitCode.REGRESSED);
      const c = JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8'));
      expect(c.baseline.source).toMatchObject({ tool, data });
      expect(c.comparable.same_plan_and_schedule).toBeNull();
      expect(c.regressed).toContain('rt/all/ttft_p50_ms');
      const p50 = c.classes.rt.all.find((f: any) => f.figure === 'ttft_p50_ms');
      expect(p50.delta).toBeGreaterThan(20); // engine-sim's first token 40 ms later
      expect(p50.interval.low).toBeGreaterThan(0);
      if (data === 'aggregate') {
        expect(p50.block_len).toBeNull();
        expect(c.limits[0]).toMatch(/gives aggregates only.*not held at the stated level/);
      } else {
        expect(p50.block_len.baseline).toBeGreaterThanOrEqual(1);
        expect(c.limits[0]).toMatch(/is read per request: its \d+ requests are resampled in blocks/);
      }
      expect(readFileSync(join(out, 'report.html'), 'utf8')).toMatch(new RegExp(`Baseline from ${tool}`));

      const eq = await compare([files[kind]!, same, '--out', join(work, `eq-${kind}`), ...GATE]);
      const e = JSON.parse(readFileSync(join(work, `eq-${kind}`, 'comparison.json'), 'utf8'));
      const ep50 = e.classes.rt.all.find((f: any) => f.figure === 'ttft_p50_ms');
      console.log(
        `${kind}: slow p50 ${p50.baseline} → ${p50.candidate}; equal p50 ${ep50.baseline} → ${ep50.candidate} [${ep50.interval?.low}, ${ep50.interval?.high}] ${ep50.verdict}`,
      );
      expect(eq.code, eq.stdout).toBe(ExitCode.OK);
      expect(e.regressed).toEqual([]);
    },
    60_000,
  );

  it("round-trips a loadfleet run's own benchmark-report.yaml as the baseline", async () => {
    const report = join(base, 'benchmark-report.yaml');
    const r = await compare([report, slow, '--out', join(work, 'br-slow'), ...GATE]);
    expect(r.code, r.stderr + r.stdout).toBe(ExitCode.REGRESSED);
    const c = JSON.parse(readFileSync(join(work, 'br-slow', 'comparison.json'), 'utf8'));
    expect(c.baseline.source).toMatchObject({
      format: 'benchmark-report',
      tool: 'llm-d Benchmark Report 0.2.1 (from loadfleet)',
      data: 'aggregate',
    });
    const eq = await compare([report, same, '--out', join(work, 'br-same'), ...GATE]);
    expect(eq.code, eq.stdout).toBe(ExitCode.OK);
    // The run directory read as its Benchmark Report when told.
    const told = await compare([base, same, '--out', join(work, 'br-told'), '--baseline-format', 'benchmark-report', ...GATE]);
    expect(told.code, told.stdout + told.stderr).toBe(ExitCode.OK);
  }, 60_000);

  it('refuses a malformed baseline with every problem, exit 2', async () => {
    const bad = new URL('./fixtures/baselines/vllm-malformed.json', import.meta.url).pathname;
    const r = await compare([bad, same, '--out', join(work, 'bad')]);
    expect(r.code).toBe(ExitCode.INVALID_INPUT);
    expect(r.stderr).toMatch(/LF_REPORT_INPUT.*cannot be compared \(4 problem\(s\)\)/);
    expect(r.stderr).toMatch(/\$\.ttfts\[1\]: expected a number/);
    expect(r.stderr).toMatch(/\$\.errors: 5 entries/);
  }, 30_000);
});
