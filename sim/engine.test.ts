import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Engine } from './engine.js';
import type { EngineJob } from './job.js';
import { SimMetrics } from './metrics.js';
import { parsePrometheus, sumOf } from './testkit.js';

// Fake timers plus a clock the test can jump forward: a jump is exactly what a blocked event loop
// looks like to the engine, so step times are exact and the test cannot flake under CPU load.
let jumpedMs = 0;
const clockMs = (): number => Date.now() + jumpedMs;
const clockNs = (): bigint => BigInt(clockMs()) * 1_000_000n;

beforeEach(() => {
  jumpedMs = 0;
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

function newEngine(maxConcurrency: number) {
  const metrics = new SimMetrics('m', 0);
  const engine = new Engine({ ttftMs: 10, itlMs: 10, prefillUsPerToken: 0, maxConcurrency }, metrics, clockNs);
  return { engine, metrics };
}

/** A job that records each token's clock time; `times` fills as it runs. */
function timedJob(outputTokens: number, onToken: (index: number) => void = () => {}) {
  const times: number[] = [];
  const finished: number[] = [];
  const job: EngineJob = {
    promptTokens: 3,
    outputTokens,
    finishReason: 'length',
    onToken: (index) => {
      times.push(clockMs());
      onToken(index);
    },
    onFinish: () => finished.push(clockMs()),
  };
  return { job, times, finished };
}

describe('engine step loop', () => {
  it('keeps an absolute grid: a blocked step is recorded as overrun, later steps neither drift nor burst', async () => {
    const { engine, metrics } = newEngine(4);
    const startMs = clockMs();
    const { job, times } = timedJob(30, (index) => {
      if (index === 5) jumpedMs += 45; // token 5's step blocks the loop for 45 ms
    });
    engine.submit(job);
    await vi.advanceTimersByTimeAsync(1000);
    // Tokens 0-5 on steps 1-6; the blocked step ends at 105, so token 6 runs late at once (a 0 ms
    // timer fires after 1 ms); then steps 11, 12, ... on the original grid: no re-anchoring at 106,
    // no burst through the missed steps 7-10.
    const expected = [...[1, 2, 3, 4, 5, 6].map((k) => k * 10), 106, ...Array.from({ length: 23 }, (_, i) => (11 + i) * 10)];
    expect(times.map((t) => t - startMs)).toEqual(expected);
    const samples = parsePrometheus(metrics.render({ running: 0, waiting: 0 }));
    const overruns = samples.get('loadfleet_sim_step_overrun_seconds_count{model_name="m"}')!;
    expect(samples.get('loadfleet_sim_step_overrun_seconds_bucket{model_name="m",le="0.02"}')).toBe(overruns - 1);
    expect(samples.get('loadfleet_sim_step_overrun_seconds_sum{model_name="m"}')).toBeCloseTo(0.036, 6);
    expect(sumOf(samples, 'vllm:generation_tokens_total')).toBe(30);
  });

  it('emits the first token on the first step at or after admission + ttft + prefill', async () => {
    const metrics = new SimMetrics('m', 0);
    const engine = new Engine({ ttftMs: 12, itlMs: 10, prefillUsPerToken: 1000, maxConcurrency: 4 }, metrics, clockNs);
    const startMs = clockMs();
    const { job, times, finished } = timedJob(3);
    engine.submit({ ...job, promptTokens: 5 }); // due at 12 + 5 = 17 ms: step 2
    await vi.advanceTimersByTimeAsync(1000);
    expect(times.map((t) => t - startMs)).toEqual([20, 30, 40]);
    expect(finished.map((t) => t - startMs)).toEqual([40]);
    expect(metrics.promptTokens).toBe(5);
  });

  it('admits FCFS up to the cap; a cancelled waiting job never starts', async () => {
    const { engine, metrics } = newEngine(1);
    const order: string[] = [];
    const tickets = ['a', 'b', 'c'].map((name) => {
      const { job } = timedJob(2);
      return engine.submit({ ...job, onFinish: () => order.push(name) });
    });
    expect([engine.runningCount, engine.waitingCount]).toEqual([1, 2]);
    engine.cancel(tickets[1]!, 'client_disconnect');
    expect([engine.runningCount, engine.waitingCount]).toEqual([1, 1]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(order).toEqual(['a', 'c']);
    expect(metrics.aborted.client_disconnect).toBe(1);
    expect(metrics.success.length).toBe(2);
  });

  it('pauses once for a stall', async () => {
    const { engine } = newEngine(1);
    const startMs = clockMs();
    const { job, times } = timedJob(4);
    engine.submit({ ...job, pause: { afterTokens: 2, ms: 55 } });
    await vi.advanceTimersByTimeAsync(1000);
    // Tokens at 10 and 20; the next is due at 20 + 55 = 75, so step 8; then step 9.
    expect(times.map((t) => t - startMs)).toEqual([10, 20, 80, 90]);
  });

  it('goes idle cleanly when several jobs finish in one step, and restarts on a fresh grid', async () => {
    const { engine, metrics } = newEngine(2);
    engine.submit(timedJob(3).job);
    engine.submit(timedJob(3).job);
    await vi.advanceTimersByTimeAsync(500);
    const startMs = clockMs();
    const { job, times } = timedJob(2);
    engine.submit(job);
    await vi.advanceTimersByTimeAsync(500);
    expect(times.map((t) => t - startMs)).toEqual([10, 20]);
    expect(metrics.render({ running: 0, waiting: 0 })).toContain('loadfleet_sim_step_overrun_seconds_sum{model_name="m"} 0\n');
  });

  it('stop() cancels everything and refuses new work', () => {
    const { engine, metrics } = newEngine(1);
    engine.submit(timedJob(5).job);
    engine.submit(timedJob(5).job);
    engine.stop();
    expect([engine.runningCount, engine.waitingCount]).toEqual([0, 0]);
    expect(engine.submit(timedJob(1).job).state).toBe('cancelled');
    expect(metrics.aborted.shutdown).toBe(2);
  });
});
