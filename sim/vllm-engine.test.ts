import { describe, expect, it } from 'vitest';
import { VirtualClock } from './clock.js';
import type { EngineJob } from './job.js';
import { BLOCK_SIZE } from './kv-cache.js';
import { SimMetrics } from './metrics.js';
import type { EngineProfile } from './profile.js';
import type { ReplicaConfig } from './vllm-core.js';
import { VllmEngine } from './vllm-engine.js';

// Round numbers so expected step times are exact: 1 ms per step, 10 µs per prefill token.
const PROFILE: EngineProfile = {
  stepOverheadS: 0.001,
  perDecodeSeqS: 0,
  perPrefillTokenS: 0.00001,
  perPrefillPairS: 0,
  kvCacheTokens: 1e6,
};
const CONFIG: ReplicaConfig = {
  maxNumSeqs: 8,
  maxNumBatchedTokens: 1024,
  kvCacheTokens: 1e6,
  prefixCaching: false,
  scheduling: 'fcfs',
  profile: PROFILE,
};

function replica(overrides: Partial<ReplicaConfig> = {}) {
  const clock = new VirtualClock();
  const metrics = new SimMetrics('m', 0);
  const engine = new VllmEngine({ ...CONFIG, ...overrides }, metrics, clock);
  return { clock, metrics, engine };
}

/** A job recording its token times; `onEach` runs after every token. */
function job(clock: VirtualClock, promptTokens: number, outputTokens: number, extra: Partial<EngineJob> = {}, onEach = () => {}) {
  const times: number[] = [];
  const done: number[] = [];
  const j: EngineJob = {
    promptTokens,
    outputTokens,
    finishReason: 'length',
    onToken: () => {
      times.push(clock.nowS());
      onEach();
    },
    onFinish: () => done.push(clock.nowS()),
    ...extra,
  };
  return { job: j, times, done };
}

describe('vLLM replica model on a virtual clock', () => {
  it('one request alone: TTFT is its prefill time, then one token per decode step', () => {
    const { clock, engine } = replica();
    const a = job(clock, 1000, 5);
    engine.submit(a.job);
    clock.run();
    expect(a.times[0]).toBeCloseTo(0.001 + 1000 * 0.00001, 12);
    const gaps = a.times.slice(1).map((t, i) => t - a.times[i]!);
    for (const gap of gaps) expect(gap).toBeCloseTo(0.001, 12);
    expect(a.times).toHaveLength(5);
    expect(a.done).toEqual([a.times[4]]);
  });

  it('prefills a long prompt in budget-sized chunks while a running request keeps decoding', () => {
    const { clock, engine } = replica();
    const first = job(clock, 10, 40);
    engine.submit(first.job);
    clock.run(0.0015); // first's prefill step ends at 1.1 ms
    const long = job(clock, 2500, 1);
    engine.submit(long.job);
    clock.run();
    // Steps after the arrival: 1023 + 1023 + 454 prompt tokens next to one decode each.
    const chunks = [1023, 1023, 454].map((n) => 0.001 + n * 0.00001);
    const stepsEndS = 0.0011 + 0.001 + chunks.reduce((a, b) => a + b, 0);
    expect(long.times[0]).toBeCloseTo(stepsEndS, 9);
    expect(first.times.length).toBe(40);
  });

  it('never runs more than max_num_seqs; the rest wait', () => {
    const { clock, engine } = replica({ maxNumSeqs: 4 });
    let maxRunning = 0;
    let maxWaiting = 0;
    const observe = () => {
      maxRunning = Math.max(maxRunning, engine.runningCount);
      maxWaiting = Math.max(maxWaiting, engine.waitingCount);
    };
    const jobs = Array.from({ length: 20 }, () => job(clock, 50, 10, {}, observe));
    for (const j of jobs) engine.submit(j.job);
    clock.run();
    expect(maxRunning).toBe(4);
    expect(maxWaiting).toBeGreaterThan(0);
    expect(jobs.every((j) => j.times.length === 10)).toBe(true);
    expect([engine.runningCount, engine.waitingCount]).toEqual([0, 0]);
  });

  it('preempts exactly when decode needs a block and none is free; every request still gets max_tokens', () => {
    const { clock, engine, metrics } = replica({ kvCacheTokens: 4 * BLOCK_SIZE });
    const trace: { usage: number; preemptions: number }[] = [];
    const observe = () => trace.push({ usage: engine.kvUsage, preemptions: metrics.preemptions });
    const older = job(clock, 16, 40, {}, observe);
    const newer = job(clock, 16, 40);
    engine.submit(older.job);
    engine.submit(newer.job);
    clock.run();
    // Token k (k >= 1) is sampled by a step over a context of 16 + k tokens. Both hold 2 blocks (4/4)
    // for contexts of 17..32; token 17 needs a third block for the older one, so the newer is
    // preempted in that step and no earlier.
    const first = trace.findIndex((t) => t.preemptions > 0);
    expect(first).toBe(17);
    expect(trace.slice(0, first).every((t) => t.preemptions === 0)).toBe(true);
    expect(trace[first - 1]!.usage).toBe(1);
    expect(Math.max(...trace.map((t) => t.usage))).toBeLessThanOrEqual(1);
    expect(metrics.preemptions).toBe(1);
    expect([older.times.length, newer.times.length]).toEqual([40, 40]);
    // The newer one recomputes after the older finishes: its next token comes after that.
    expect(newer.times[17]!).toBeGreaterThan(older.done[0]!);
    expect(engine.kvUsage).toBe(0);
  });

  it('priority scheduling admits the highest priority first, FCFS within one', () => {
    const { clock, engine } = replica({ maxNumSeqs: 1, scheduling: 'priority' });
    const order: string[] = [];
    const named = (name: string, priority: number) => job(clock, 10, 2, { priority, onFinish: () => order.push(name) });
    engine.submit(named('running', 0).job);
    clock.run(0); // its first step starts before the others arrive
    engine.submit(named('low', -10).job);
    engine.submit(named('std1', 0).job);
    engine.submit(named('high', 100).job);
    engine.submit(named('std2', 0).job);
    clock.run();
    expect(order).toEqual(['running', 'high', 'std1', 'std2', 'low']);
  });

  it('with prefix caching, a shared prefix hits in whole blocks and shortens prefill', () => {
    const { clock, engine, metrics } = replica({ prefixCaching: true });
    const hashes = Array.from({ length: 10 }, (_, i) => 1000 + i); // a 160-token prompt's blocks
    const a = job(clock, 160, 1, { blockHashes: hashes });
    engine.submit(a.job);
    clock.run();
    const b = job(clock, 160, 1, { blockHashes: hashes });
    const startS = clock.nowS();
    engine.submit(b.job);
    clock.run();
    // At least one token is always computed, so 9 of the 10 blocks hit.
    expect(metrics.prefixQueries).toBe(320);
    expect(metrics.prefixHits).toBe(144);
    expect(b.times[0]! - startS).toBeCloseTo(0.001 + 16 * 0.00001, 12);
  });

  it('counts nothing in the prefix cache while prefix caching is off', () => {
    const { clock, engine, metrics } = replica();
    engine.submit(job(clock, 160, 1, { blockHashes: [1, 2, 3] }).job);
    clock.run();
    expect([metrics.prefixQueries, metrics.prefixHits]).toEqual([0, 0]);
  });

  it('pauses a stalled request without holding back the others, and cancels free the KV', () => {
    const { clock, engine } = replica();
    const stalled = job(clock, 10, 4, { pause: { afterTokens: 2, ms: 50 } });
    const other = job(clock, 10, 20);
    engine.submit(stalled.job);
    const t = engine.submit(other.job);
    clock.run();
    expect(stalled.times[2]! - stalled.times[1]!).toBeGreaterThanOrEqual(0.05);
    expect(other.times.length).toBe(20);
    expect(other.times[19]!).toBeLessThan(0.05);
    expect(t.state).toBe('done');
    const gone = job(clock, 100, 50);
    const ticket = engine.submit(gone.job);
    clock.run(clock.nowS() + 0.005);
    engine.cancel(ticket, 'client_disconnect');
    expect([engine.runningCount, engine.kvUsage]).toEqual([0, 0]);
    clock.run();
    expect(gone.times.length).toBeLessThan(50);
  });
});
