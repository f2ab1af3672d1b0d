import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ExactStore } from '../coordinator/exact-store.js';
import type { RequestRecord } from '../shared/metrics.js';
import { blankRecord } from '../shared/metrics.js';
import { ToolTally } from './tool-tally.js';

function called(i: number, firstMs: number | null, valid: boolean | null): RequestRecord {
  return {
    ...blankRecord('chat', i, null),
    status: 'ok',
    sent_ns: 1e6,
    done_ns: 1e9,
    tool_calls: 1,
    tool_arguments_valid: valid,
    first_tool_call_ns: firstMs === null ? null : 1e6 + firstMs * 1e6,
  };
}

describe('ToolTally (its times in the run exact store)', () => {
  it('gives the exact p50 and mean of the time to first tool call, the same from a spilled store', async () => {
    const rows = [
      called(0, 30, true),
      called(1, 10, true),
      called(2, 20, false),
      called(3, null, null),
      { ...called(4, 5, true), status: 'http_error' as const },
    ];
    const alone = new ToolTally();
    const dir = mkdtempSync(`${tmpdir()}/lf-tools-`);
    try {
      const store = new ExactStore(`${dir}/spill`, 0);
      const stored = new ToolTally(store);
      for (const r of rows) {
        alone.add(r);
        stored.add(r);
      }
      expect(() => stored.summary()).toThrow(/before the exact store/);
      stored.setExact(await store.summaries());
      expect(alone.summary()).toEqual({
        responses_with_tool_calls: 4,
        tool_calls: 4,
        arguments_valid: 2,
        arguments_invalid: 1,
        arguments_unchecked: 1,
        time_to_first_tool_call_p50_ms: 20,
        time_to_first_tool_call_mean_ms: 20,
      });
      expect(stored.summary()).toEqual(alone.summary());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
