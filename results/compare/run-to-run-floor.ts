// Pure: the run-to-run floor one run a side must clear besides its interval, by percentile level.
// Same-seed runs of one plan on one machine differ more at the tail than at the median (a p95 of
// 50 requests sits on its top three), so the floor is stated per level: p50 (and shares or rates,
// which are means), p95 and p99, each a share of the baseline.

export interface FloorByLevel {
  p50: number;
  p95: number;
  p99: number;
}

/**
 * The default, in % of the baseline: what ten same-seed engine-sim runs of 48–64 requests differed
 * by beyond their own intervals and timing uncertainty, about the 97.5th percentile of 450 ordered
 * pairs (2-core machine shared with ~8 engineers' builds, 2026-12-07; docs/verdicts.md).
 */
export const RUN_TO_RUN_FLOOR_PCT: FloorByLevel = { p50: 5, p95: 35, p99: 75 };

/** --run-to-run-floor-pct: one number for every level, or p50=…,p95=…,p99=… (levels not named keep the default). */
export function parseFloorPct(spec: string): { floor: FloorByLevel; problem: null } | { floor: null; problem: string } {
  const bad = (why: string) => ({ floor: null, problem: `--run-to-run-floor-pct ${spec}: ${why}` });
  const all = Number(spec);
  if (spec.trim() !== '' && Number.isFinite(all))
    return all >= 0 ? { floor: { p50: all, p95: all, p99: all }, problem: null } : bad('must be >= 0');
  const floor = { ...RUN_TO_RUN_FLOOR_PCT };
  for (const item of spec.split(',').map((s) => s.trim())) {
    const m = /^(p50|p95|p99)=(\d+(?:\.\d+)?)$/.exec(item);
    if (!m) return bad('expected a percentage, or p50=…,p95=…,p99=… (e.g. p50=5,p95=35,p99=75)');
    floor[m[1] as keyof FloorByLevel] = Number(m[2]);
  }
  return { floor, problem: null };
}

/** The floor (a share) a figure's change must clear: its percentile's level, or the p50's for a share or rate. */
export function floorOf(floor: FloorByLevel | number, figure: string): number {
  if (typeof floor === 'number') return floor;
  const level = /_p(50|95|99)_ms$/.exec(figure)?.[1];
  return level === '95' ? floor.p95 : level === '99' ? floor.p99 : floor.p50;
}

/** The floor in % as a share. */
export function floorShares(pct: FloorByLevel): FloorByLevel {
  return { p50: pct.p50 / 100, p95: pct.p95 / 100, p99: pct.p99 / 100 };
}
