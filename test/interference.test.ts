// suite: timing
// The product's question end to end, on the embedded engine-sim (a vLLM replica behind the
// gateway): the short interference plan with and without the batch class, each ended at 45 s, when
// its last phase does (its recovery window and idle tail are not what this judges: the surge is).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../shared/plan.js';
import { onlyRunDir, readRunJson, runCoordinator, tempDir, writePlan } from './harness.js';

const EXAMPLE = JSON.parse(readFileSync(new URL('../examples/batch-interference-short.plan.json', import.meta.url), 'utf8')) as Plan;
/** Both classes' phases end at 45 s; the surge window (20–40 s) is as in the example. */
const LOAD_END_S = 45;
const SHORT: Plan = { ...EXAMPLE, duration_s: LOAD_END_S, windows: EXAMPLE.windows!.filter((w) => w.end_s <= LOAD_END_S) };

async function surgeP95TtftMs(plan: Plan): Promise<{ p95: number; run: any }> {
  const work = tempDir();
  const res = await runCoordinator(['--agents', '2', '--plan', writePlan(work, plan), '--out', join(work, 'out'), '--quiet']);
  expect(res.code, res.stderr).toBe(0);
  const run = readRunJson(onlyRunDir(join(work, 'out')));
  return { p95: run.classes.realtime.windows.surge.ttft_p95_ms, run };
}

describe('batch work already running slows realtime traffic', () => {
  // Two runs of 45 s, one a test (each under the two-minute bound); the second compares with the first.
  let alone: { p95: number; run: any } | undefined;

  it('realtime alone: its surge p95 TTFT, every request answered', async () => {
    alone = await surgeP95TtftMs({
      ...SHORT,
      name: 'short-realtime-only',
      classes: SHORT.classes.filter((c) => c.name === 'realtime'),
    });
    expect(alone.run.failed).toBe(0);
  });

  it('with the batch class: at least 10x on realtime surge p95 TTFT', async () => {
    expect(alone, 'the realtime-only run above did not complete').toBeDefined();
    const together = await surgeP95TtftMs(SHORT);
    console.log(
      `interference: realtime surge p95 TTFT ${alone!.p95} ms alone, ${together.p95} ms with batch (${(together.p95 / alone!.p95).toFixed(1)}x)`,
    );
    expect(together.run.failed).toBe(0);
    expect(together.p95 / alone!.p95).toBeGreaterThanOrEqual(10);
  });
});
