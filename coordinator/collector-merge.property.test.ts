// Property: however the values are split across agents, worker threads and seconds, the
// histograms the coordinator merges (the collector's interval and run merges, the agent's thread
// merge, the live view's running merge) give the same percentiles as one histogram fed every
// value, and those are within the histogram's stated precision (0.05%) of the exact ones.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeIntervals, mergeRunWindows } from '../agent/worker-merge.js';
import type { Histogram } from '../shared/histogram.js';
import {
  addEncoded,
  encodeHistogram,
  HISTOGRAM_CONFIG,
  mergeInto,
  newHistogram,
  percentilesNs,
  recordNs,
  summarizeMs,
} from '../shared/histogram.js';
import { getOrCreate } from '../shared/maps.js';
import type { Plan } from '../shared/plan.js';
import type { IntervalClass } from '../shared/protocol.js';
import { buildSchedule } from '../shared/schedule.js';
import { Collector } from './collector.js';

const SOAK = process.env.LOADFLEET_SOAK === '1' ? 10 : 1;
/** The soak round's runs take ten times as long. */
const TIMEOUT_MS = SOAK > 1 ? 600_000 : undefined;
const Q = [0, 0.001, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1];
/** The stated precision of a reported value (histogram.ts): ≤ 0.05% of the exact one. */
const REL = 0.0005;
const AGENTS = 4;
const SECONDS = 5;

const PLAN: Plan = {
  schema: 'loadfleet.plan/v1',
  name: 'merge-property',
  seed: 1,
  duration_s: SECONDS,
  drain_timeout_s: 0,
  target: { base_url: 'http://127.0.0.1:9/v1', api: 'chat', model: 'none', timeout_s: 10 },
  classes: [
    {
      name: 'c',
      prompt: { input_tokens: 16, output_tokens: 16 },
      load: { model: 'concurrency', phases: [{ start_s: 0, duration_s: SECONDS, concurrency: 1 }] },
    },
  ],
};

// Values across every scale the histogram covers: exact sub-buckets (< 2048 ns), typical
// latencies, the clamped extremes (negative, past 1 h).
const valueNs = fc.oneof(
  fc.integer({ min: 0, max: 4096 }),
  fc.integer({ min: 1_000_000, max: 5_000_000_000 }),
  fc.double({ min: 0, max: 4e12, noNaN: true }),
  fc.constantFrom(-5, 0, 1, 2047, 2048, 2049, HISTOGRAM_CONFIG.highest_ns, HISTOGRAM_CONFIG.highest_ns + 1, 1e15),
);

/** Each value with where it was recorded: agent, worker thread of that agent, second. */
const placed = fc.array(
  fc.record({
    v: valueNs,
    agent: fc.nat(AGENTS - 1),
    thread: fc.nat(1),
    second: fc.nat(SECONDS - 1),
    // Mostly one value; some repeated; a few with the counts of long runs, past 32 bits.
    count: fc.oneof(
      { weight: 18, arbitrary: fc.constant(1) },
      { weight: 2, arbitrary: fc.integer({ min: 2, max: 200 }) },
      { weight: 1, arbitrary: fc.integer({ min: 2 ** 32 - 2, max: 2 ** 42 }) },
    ),
  }),
  { minLength: 1, maxLength: 300 },
);

/** Every (agent, second) interval once, in any order, then some of them again. */
const deliveries = fc
  .tuple(
    fc.shuffledSubarray(
      Array.from({ length: AGENTS * SECONDS }, (_, i) => ({ agent: i % AGENTS, second: Math.floor(i / AGENTS) })),
      { minLength: AGENTS * SECONDS },
    ),
    fc.array(fc.record({ agent: fc.nat(AGENTS - 1), second: fc.nat(SECONDS - 1) }), { maxLength: 6 }),
  )
  .map(([once, again]) => [...once, ...again]);

/** What recordNs stores for a value: clamped into range and rounded to the ns. */
const stored = (v: number): number => (v < 0 ? 0 : v > HISTOGRAM_CONFIG.highest_ns ? HISTOGRAM_CONFIG.highest_ns : Math.round(v));

/** The exact nearest-rank value (rank ceil(q·n), as histogram.ts defines it) of values with counts, sorted by value. */
function exactAt(sorted: readonly { v: number; count: number }[], total: number, q: number): number {
  const rank = Math.min(total, Math.max(1, Math.ceil(q * total - 1e-9)));
  let seen = 0;
  for (const x of sorted) {
    seen += x.count;
    if (seen >= rank) return x.v;
  }
  return Number.NaN;
}

function expectWithinPrecision(got: readonly number[], sorted: readonly { v: number; count: number }[], total: number, what: string): void {
  for (const [i, q] of Q.entries()) {
    const exact = exactAt(sorted, total, q);
    const err = Math.abs(got[i]! - exact);
    expect(err <= REL * exact || err === 0, `${what} q=${q}: ${got[i]} vs exact ${exact}`).toBe(true);
  }
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('merged HDR percentiles (property)', () => {
  it(
    'any split across agents, threads and seconds: merges equal one histogram and are within 0.05% of exact',
    async () => {
      const schedule = buildSchedule(PLAN);
      const timebases = Array.from({ length: AGENTS }, (_, a) => ({ agentId: `a${a}`, startLocalNs: 0n, alignNs: 0n }));
      await fc.assert(
        fc.asyncProperty(placed, deliveries, async (rows, order) => {
          const all: { v: number; count: number }[] = [];
          const single = newHistogram();
          // agent → thread → second → histogram (an interval), and agent → thread → run histogram.
          const interval = new Map<string, Histogram>();
          const run = new Map<string, Histogram>();
          for (const r of rows) {
            all.push({ v: stored(r.v), count: r.count });
            for (const h of [
              single,
              getOrCreate(interval, `${r.agent}/${r.thread}/${r.second}`, newHistogram),
              getOrCreate(run, `${r.agent}/${r.thread}`, newHistogram),
            ]) {
              if (r.count === 1) recordNs(h, r.v);
              else h.recordValueWithCount(stored(r.v), r.count);
            }
          }
          all.sort((a, b) => a.v - b.v);
          const total = all.reduce((n, x) => n + x.count, 0);
          expect(single.totalCount).toBe(total);
          const want = percentilesNs(single, Q);
          expectWithinPrecision(want, all, total, 'one histogram');
          const exactMean = all.reduce((sum, x) => sum + x.v * x.count, 0) / total;
          expect(Math.abs(single.mean - exactMean)).toBeLessThanOrEqual(REL * exactMean + 1e-9);

          const dir = mkdtempSync(join(tmpdir(), 'lf-merge-prop-'));
          dirs.push(dir);
          const seconds = new Map<number, Histogram>();
          const collector = new Collector(
            PLAN,
            schedule,
            timebases,
            dir,
            0n,
            () => Array.from({ length: AGENTS }, (_, a) => a),
            {
              second: (s, _cls, _counts, hs) => {
                const h = hs.get('e2e');
                if (h) seconds.set(s, h);
              },
              finished: () => {},
            },
            // Nothing is late here: every interval, in whatever order, must be in its second's row.
            SECONDS,
          );
          // Each agent merges its threads' intervals (worker-merge.ts), then the collector merges the agents'.
          // In any order, some sent twice (an agent resends its recent intervals after a reconnect).
          for (const { agent: a, second: s } of order) {
            const parts: Record<string, IntervalClass>[] = [];
            for (let t = 0; t < 2; t++) {
              const h = interval.get(`${a}/${t}/${s}`);
              parts.push({ c: { issued: 0, completed: 0, failed: 0, histograms: h ? { e2e: encodeHistogram(h) } : {} } });
            }
            collector.interval(a, s, mergeIntervals(parts));
          }
          expect(collector.lateIntervals).toBe(0);
          for (let a = 0; a < AGENTS; a++) {
            const parts = [0, 1].flatMap((t) => {
              const h = run.get(`${a}/${t}`);
              return h ? [{ c: { all: { e2e: encodeHistogram(h) } } }] : [];
            });
            collector.final(a, mergeRunWindows(parts));
          }
          await collector.close();

          const merged = collector.mergedHistogram('c', 'all', 'e2e');
          expect(merged.totalCount).toBe(total);
          expect(percentilesNs(merged, Q)).toEqual(want);
          expect(summarizeMs(merged)).toEqual(summarizeMs(single));

          // The live view's running merge of the written seconds (mergeInto, as live/state.ts does).
          const live = newHistogram();
          for (const h of seconds.values()) mergeInto(live, h);
          expect(live.totalCount).toBe(total);
          expect(percentilesNs(live, Q)).toEqual(want);
          expect(summarizeMs(live)).toEqual(summarizeMs(single));

          // The interval log as written (histograms.hlog), added back up as the report reads it.
          const fromLog = newHistogram();
          for (const line of readFileSync(join(dir, 'histograms.hlog'), 'utf8').split('\n'))
            if (line.startsWith('Tag=c/e2e,')) addEncoded(fromLog, line.split(',')[4]!);
          expect(percentilesNs(fromLog, Q)).toEqual(want);
          rmSync(dir, { recursive: true, force: true });
        }),
        { numRuns: 20 * SOAK },
      );
    },
    TIMEOUT_MS,
  );
});
