// Pure: the verdict on one figure's change, from its point change, its interval and the user's
// threshold. A change is a regression only when the interval excludes zero on the worse side
// (beyond noise) and the change is larger than the threshold (beyond what the user tolerates).
import type { Interval } from './bootstrap.js';

export type ChangeVerdict = 'regressed' | 'improved' | 'within_noise' | 'not_evaluable';

/** Which way a figure gets worse. */
export type Better = 'lower' | 'higher';

/** How large a change must be to count: relative to the baseline (latency, goodput) or absolute (success rate, a share). */
export interface Threshold {
  kind: 'relative' | 'absolute';
  value: number;
}

/** The verdict on candidate − baseline = delta with its interval. */
export function changeVerdict(
  baseline: number | null,
  delta: number | null,
  interval: Interval | null,
  better: Better,
  threshold: Threshold,
): ChangeVerdict {
  if (baseline === null || delta === null || interval === null) return 'not_evaluable';
  const size =
    threshold.kind === 'relative'
      ? baseline === 0
        ? delta === 0
          ? 0
          : Number.POSITIVE_INFINITY
        : Math.abs(delta / baseline)
      : Math.abs(delta);
  if (size <= threshold.value) return 'within_noise';
  const worse = better === 'lower' ? interval.low > 0 : interval.high < 0;
  const improved = better === 'lower' ? interval.high < 0 : interval.low > 0;
  return worse ? 'regressed' : improved ? 'improved' : 'within_noise';
}
