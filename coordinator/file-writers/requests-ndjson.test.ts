import { describe, expect, it } from 'vitest';
import { parseExact } from '../../shared/json.js';
import { blankRecord } from '../../shared/metrics.js';
import { formatRequestRow } from './requests-ndjson.js';

describe('requests.ndjson rows', () => {
  const record = { ...blankRecord('rt', 7, 1_000_000), status: 'ok' as const, sent_ns: 1_000_500, done_ns: 51_000_500 };

  it('keeps the slew corrections, so raw clock readings can be recovered, and the local times where alignment moved them', () => {
    const row = parseExact(
      formatRequestRow(
        { ...record, clock_correction_ns: 1_200, clock_correction_done_ns: 26_200 },
        {
          agentId: 'fast',
          startLocalNs: 1_791_200_544_000_000_000n,
          alignNs: 250_000_000n,
        },
      ),
    ) as Record<string, any>;
    expect(row.clock_correction_ns).toBe(1_200);
    expect(row.clock_correction_done_ns).toBe(26_200);
    expect(row.sent_local_ns).toBe(1_791_200_544_001_000_500n);
    expect(row.sent_unix_ns).toBe(1_791_200_544_001_000_500n - 250_000_000n);
    // The agent's raw clock at its send: the local stamp plus the correction.
    expect(row.sent_local_ns + BigInt(row.clock_correction_ns)).toBe(1_791_200_544_001_001_700n);
  });

  it('writes null corrections for records of older agents, and no local times in one clock domain', () => {
    const row = parseExact(formatRequestRow(record, { agentId: 'a', startLocalNs: 5n, alignNs: 0n })) as Record<string, any>;
    expect(row.clock_correction_ns).toBeNull();
    expect(row.clock_correction_done_ns).toBeNull();
    expect(row.sent_local_ns).toBeUndefined();
  });
});
