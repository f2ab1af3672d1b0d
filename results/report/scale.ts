// Axis arithmetic for the report's charts: linear and log scales with round ticks, and number
// formatting that reads well on an axis (1,500 not 1500.0000001). Pure functions.

/** Maps a data value to a pixel coordinate, and lists the tick values worth labelling. */
export interface Scale {
  readonly kind: 'linear' | 'log';
  readonly domain: readonly [number, number];
  at(value: number): number;
  ticks: readonly number[];
}

/** Round tick values (1, 2 or 5 × 10^k steps) covering [min, max], about `count` of them. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [];
  if (min === max) return [min];
  const step = stepFor(min, max, count);
  const first = Math.ceil(min / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let v = first; v <= max + step * 1e-9; v += step) ticks.push(roundTo(v, step));
  return ticks;
}

/** [min, max] widened to round tick values, so the axis starts and ends on a labelled tick. */
export function niceDomain(min: number, max: number, count = 5): [number, number] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  if (min === max) return min === 0 ? [0, 1] : min > 0 ? [0, min * 2] : [min * 2, 0];
  const step = stepFor(min, max, count);
  return [roundTo(Math.floor(min / step + 1e-9) * step, step), roundTo(Math.ceil(max / step - 1e-9) * step, step)];
}

/** A linear scale from `domain` onto the pixel range [from, to] (to may be below from, for y). */
export function linearScale(domain: readonly [number, number], from: number, to: number, tickCount = 5): Scale {
  const [d0, d1] = domain;
  const span = d1 - d0 || 1;
  return { kind: 'linear', domain, at: (v) => from + ((v - d0) / span) * (to - from), ticks: niceTicks(d0, d1, tickCount) };
}

/** A base-10 log scale over [min, max] (both > 0), widened to whole decades. */
export function logScale(min: number, max: number, from: number, to: number): Scale {
  const lo = 10 ** Math.floor(Math.log10(min));
  const hi = 10 ** Math.ceil(Math.log10(max));
  const top = hi <= lo ? lo * 10 : hi;
  const l0 = Math.log10(lo);
  const span = Math.log10(top) - l0;
  const ticks: number[] = [];
  // Few decades: label 1, 2 and 5 of each so the axis has enough landmarks.
  const mantissas = span <= 2 ? [1, 2, 5] : [1];
  for (let e = l0; e <= Math.log10(top) + 1e-9; e++)
    for (const m of mantissas) if (m * 10 ** e <= top * (1 + 1e-9)) ticks.push(roundTo(m * 10 ** e, 10 ** Math.min(0, e)));
  return { kind: 'log', domain: [lo, top], at: (v) => from + ((Math.log10(v) - l0) / span) * (to - from), ticks };
}

/** Whether values spread over so many orders of magnitude that a linear axis would flatten the small ones. */
export function wantsLog(values: readonly number[], ratio = 20): boolean {
  if (values.length === 0 || values.some((v) => v <= 0)) return false;
  return Math.max(...values) / Math.min(...values) > ratio;
}

/** A number for an axis or a table: thousands separated, at most `digits` decimals, no trailing zeros. */
export function formatNumber(v: number | null | undefined, digits = 3): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const abs = Math.abs(v);
  const d = abs >= 1000 ? 0 : abs >= 100 ? Math.min(digits, 1) : abs >= 10 ? Math.min(digits, 2) : digits;
  return new Intl.NumberFormat('en-US', { maximumFractionDigits: d }).format(v);
}

/** A number as recorded, to 3 decimals at most, thousands separated: for tables, where nothing should be rounded away. */
export function formatExact(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 }).format(v);
}

// The round step (1, 2 or 5 × 10^k) giving about `count` intervals; up to a quarter more is
// accepted, so 0 … 1.016 gets 0.2 steps (to 1.2) rather than 0.5 steps (to 1.5).
function stepFor(min: number, max: number, count: number): number {
  const raw = (max - min) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw * 0.8) ?? 10 * mag;
}

function roundTo(v: number, step: number): number {
  const decimals = Math.max(0, -Math.floor(Math.log10(step)) + 1);
  return Number(v.toFixed(Math.min(decimals, 12)));
}
