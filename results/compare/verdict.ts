// Pure: the verdict on one figure's change, from its point change, whether the test found it beyond
// noise on either side, and the user's threshold. A change is a regression only when it is beyond
// noise on the worse side and larger than the threshold (beyond what the user tolerates). With one
// run a side, a worsening beyond the run's own noise but not beyond the margin the run cannot see
// (timing uncertainty and run-to-run floor) is undecided: neither a pass nor a regression.

export type ChangeVerdict = 'regressed' | 'improved' | 'within_noise' | 'undecided' | 'not_evaluable';

/** Which way a figure gets worse. */
export type Better = 'lower' | 'higher';

/** How large a change must be to count: relative to the baseline (latency, goodput) or absolute (success rate, a share). */
export interface Threshold {
  kind: 'relative' | 'absolute';
  value: number;
}

/** |delta| in the threshold's terms (relative to the baseline, or absolute); +∞ from a 0 or +∞ baseline to another value. */
export function changeSize(baseline: number, delta: number, threshold: Threshold): number {
  if (threshold.kind === 'absolute') return Math.abs(delta);
  if (delta === 0) return 0;
  if (baseline === 0 || !Number.isFinite(baseline)) return Number.POSITIVE_INFINITY;
  return Math.abs(delta / baseline);
}

/**
 * The verdict on candidate − baseline = delta (null: no finite change), given which side the test
 * found it on: beyondNoise beyond the figure's interval, beyondMargin beyond its interval and the
 * margin besides (the same as beyondNoise when there is no margin).
 */
export function changeVerdict(
  baseline: number | null,
  delta: number | null,
  beyondNoise: { worse: boolean; better: boolean },
  threshold: Threshold,
  beyondMargin: { worse: boolean; better: boolean } = beyondNoise,
): ChangeVerdict {
  if (baseline === null) return 'not_evaluable';
  if (delta === null || changeSize(baseline, delta, threshold) <= threshold.value) return 'within_noise';
  if (beyondMargin.worse) return 'regressed';
  if (beyondMargin.better) return 'improved';
  // Only a worsening is left undecided: the gate's question is whether the candidate is worse.
  return beyondNoise.worse ? 'undecided' : 'within_noise';
}
