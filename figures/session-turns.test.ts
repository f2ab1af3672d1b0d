import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ExactStore } from '../coordinator/exact-store.js';
import type { RequestRecord } from '../shared/metrics.js';
import { blankRecord } from '../shared/metrics.js';
import { SessionTurns } from './session-turns.js';

function turn(session: number, t: number, ok: boolean): RequestRecord {
  return { ...blankRecord('chat', session * 10 + t, null), session_id: session, turn: t, status: ok ? 'ok' : 'http_error', done_ns: 1 };
}

describe('session turn counts', () => {
  it('counts turns cut by the run end apart from turns abandoned after a failure', () => {
    const ones = (n: number) => Array.from({ length: n }, () => 1);
    const shapes = {
      turns: [3, 3, 3, 2],
      userTokens: [3, 3, 3, 2].map(ones),
      outputTokens: [3, 3, 3, 2].map(ones),
      thinkNs: [2, 2, 2, 1].map(ones),
    };
    const t = new SessionTurns(shapes);
    // Session 0 ran all 3; session 1 was cut after turn 1 (ok); session 2's turn 2 failed; session 3 never started.
    for (const r of [turn(0, 1, true), turn(0, 2, true), turn(0, 3, true), turn(1, 1, true), turn(2, 1, true), turn(2, 2, false)]) t.add(r);
    expect(t.turnCounts()).toEqual({ turns_planned: 9, turns_sent: 6, turns_not_sent: 2, turns_abandoned: 1 });
  });
});

describe('session turn TTFTs through an exact sink', () => {
  it('gives the nearest-rank p50 and p95 of each turn from the sink, in memory or from the run store', async () => {
    const ones = (n: number) => Array.from({ length: n }, () => 1);
    const shapes = { turns: [2, 2, 2], userTokens: [2, 2, 2].map(ones), outputTokens: [2, 2, 2].map(ones), thinkNs: [1, 1, 1].map(ones) };
    const rows = [0, 1, 2].flatMap((s) => [1, 2].map((t) => ({ ...turn(s, t, true), sent_ns: 0, first_content_ns: (s + 1) * t * 1e6 })));
    const alone = new SessionTurns(shapes);
    const dir = mkdtempSync(`${tmpdir()}/lf-turns-`);
    try {
      // Spilled from the first value: the figures come from the file's streamed selection.
      const store = new ExactStore(`${dir}/spill`, 0);
      const stored = new SessionTurns(shapes, store);
      for (const r of rows) {
        alone.add(r);
        stored.add(r);
      }
      expect(() => stored.summary()).toThrow(/before the exact store/);
      stored.setExact(await store.summaries());
      const byTurn = (alone.summary() as { by_turn: { ttft_p50_ms: number; ttft_p95_ms: number }[] }).by_turn;
      // Turn 1: 1, 2, 3 ms; turn 2: 2, 4, 6 ms.
      expect(byTurn.map((t) => [t.ttft_p50_ms, t.ttft_p95_ms])).toEqual([
        [2, 3],
        [4, 6],
      ]);
      expect(stored.summary()).toEqual(alone.summary());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
