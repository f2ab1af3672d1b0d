import { describe, expect, it } from 'vitest';
import { formatRequestRow } from '../../coordinator/file-writers/requests-ndjson.js';
import { LagAccumulator, lagFields, nearestRank } from './lag-series.js';

const START = 1_796_236_324_000_000_000n;
const MS = 1_000_000n;

describe('schedule lag per agent and second', () => {
  it.each([
    ['held in memory', undefined],
    ['spilled', 1],
  ])('takes the nearest-rank p99 of sent − intended per second of intended time (%s)', (_, maxInMemory) => {
    const acc = new LagAccumulator(START, maxInMemory);
    // agent-1, second 0: lags 1..100 ms → p99 is the 99th value, 99 ms.
    for (let i = 1; i <= 100; i++) acc.add('agent-1', START + 100n * MS, START + 100n * MS + BigInt(i) * MS);
    // agent-1, second 2: one request with 0.25 ms lag (exact, from ns integers beyond 2^53).
    acc.add('agent-1', START + 2_500n * MS, START + 2_500n * MS + 250_000n);
    acc.add('agent-10', START + 1_000n * MS, START + 1_003n * MS);
    acc.add('agent-2', START + 1_000n * MS, START + 1_007n * MS);
    // Closed loop (no intended time) and unsent rows are left out.
    acc.add('agent-2', null, START + 1_500n * MS);
    acc.add('agent-2', START, undefined);
    const out = acc.p99PerSecond();
    expect(out.map((a) => a.agent)).toEqual(['agent-1', 'agent-2', 'agent-10']);
    expect(out[0]!.points).toEqual([
      [0.5, 99],
      [2.5, 0.25],
    ]);
    expect(out[0]!.requests).toBe(101);
    expect(out[1]!.points).toEqual([[1.5, 7]]);
    expect(out[2]!.points).toEqual([[1.5, 3]]);
  });

  it('puts a request intended before the start in second −1', () => {
    const acc = new LagAccumulator(START);
    acc.add('a', START - 1n, START + MS);
    expect(acc.p99PerSecond()[0]!.points[0]![0]).toBe(-0.5);
  });

  it('nearest rank: rank ⌈q·n⌉', () => {
    expect(nearestRank([5, 1, 3], 0.5)).toBe(3);
    expect(nearestRank([1, 2, 3, 4], 0.99)).toBe(4);
    expect(nearestRank([1, 2, 3, 4], 0.25)).toBe(1);
  });
});

describe('requests.ndjson fields for the lag chart', () => {
  it('reads the writer own rows directly and anything else by a full exact parse, with the same result', () => {
    const record = {
      class: 'realtime',
      request_index: 7,
      status: 'ok',
      http_status: 200,
      intended_ns: 1_000_000,
      sent_ns: 1_250_000,
      headers_ns: null,
      first_output_ns: null,
      first_content_ns: null,
      last_token_ns: null,
      done_ns: null,
      prompt_tokens: 1,
      completion_tokens: 1,
      cached_tokens: null,
      reasoning_chunks: 0,
      content_chunks: 1,
      retry_after_s: null,
      dropped_reason: null,
      error: '"intended_unix_ns":1,"sent_unix_ns":2',
    } as const;
    const line = formatRequestRow(record as never, { agentId: 'agent "q"', startLocalNs: START, alignNs: 5n }).trim();
    const fast = lagFields(line);
    expect(fast).toEqual({ agentId: 'agent "q"', intendedNs: START + 1_000_000n - 5n, sentNs: START + 1_250_000n - 5n });
    const reordered = `{"sent_unix_ns":${START + 1_250_000n - 5n}, "agent_id":"agent \\"q\\"","intended_unix_ns":${START + 1_000_000n - 5n}}`;
    expect(lagFields(reordered)).toEqual(fast);
    const closed = line.replace(/"intended_unix_ns":\d+/, '"intended_unix_ns":null');
    expect(lagFields(closed).intendedNs).toBeNull();
  });
});
