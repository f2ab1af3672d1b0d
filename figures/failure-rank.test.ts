import { describe, expect, it } from 'vitest';
import { failureRank, failuresDecide } from './failure-rank.js';

describe('failures rank +∞', () => {
  it('decide the p95 when more than 5% of every request failed, whatever the others carried', () => {
    expect(failuresDecide(5, 100)).toBe(false);
    expect(failuresDecide(6, 100)).toBe(true);
    // 20 requests: the p95 is rank 19, so 2 failures hold it; 1 does not.
    expect(failuresDecide(1, 20)).toBe(false);
    expect(failuresDecide(2, 20)).toBe(true);
    // A single failed request is its whole population's p95.
    expect(failuresDecide(1, 1)).toBe(true);
    expect(failuresDecide(0, 0)).toBe(false);
  });

  it('place the quantile on a measured rank, on the failures, or leave it to the unmeasured', () => {
    expect(failureRank({ requests: 0, failed: 0, measured: 0 })).toEqual({ kind: 'empty' });
    expect(failureRank({ requests: 100, failed: 90, measured: 0 })).toEqual({ kind: 'failures_decide' });
    expect(failureRank({ requests: 100, failed: 0, measured: 0 })).toEqual({ kind: 'unmeasured_decide' });
    expect(failureRank({ requests: 100, failed: 5, measured: 0 })).toEqual({ kind: 'unmeasured_decide' });
    expect(failureRank({ requests: 100, failed: 5, measured: 95 })).toEqual({ kind: 'measured', rank: 95 });
    expect(failureRank({ requests: 100, failed: 3, measured: 97 })).toEqual({ kind: 'measured', rank: 95 });
    // 2 measured, 5 failed, 93 unmeasured: the ranked p95 (rank 7 of 7) is a failure, but 5 of 100 do not decide it.
    expect(failureRank({ requests: 100, failed: 5, measured: 2 })).toEqual({ kind: 'unmeasured_decide' });
    // The p99 too: 1 failure of 100 does not hold it, 2 do.
    expect(failureRank({ requests: 100, failed: 1, measured: 99 }, 0.99)).toEqual({ kind: 'measured', rank: 99 });
    expect(failureRank({ requests: 100, failed: 2, measured: 98 }, 0.99)).toEqual({ kind: 'failures_decide' });
  });
});
