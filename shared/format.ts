// Numbers for people: every human-facing line (summaries, the live view, logs, report text)
// formats through here, so one figure reads the same everywhere — rounded to what a reader can
// use, thousands separated, with its unit. Artifacts never go through this: they keep full precision.

const formatters = new Map<number, Intl.NumberFormat>();

/** A number with thousands separators and at most `maxDigits` decimals (no trailing zeros); a dash for none. */
export function formatNum(v: number | null | undefined, maxDigits = 0): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  let f = formatters.get(maxDigits);
  if (!f) {
    f = new Intl.NumberFormat('en-US', { maximumFractionDigits: maxDigits });
    formatters.set(maxDigits, f);
  }
  // Intl renders -0 as "-0"; a rounded-away sign carries no meaning for a reader.
  const s = f.format(v);
  return s === '-0' ? '0' : s;
}

/** Decimals that keep about three significant digits: 1,234 · 123 · 12.3 · 1.23 · 0.123. */
function significantDigits(v: number): number {
  const abs = Math.abs(v);
  return abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
}

/** Milliseconds: "10,423 ms", "185 ms", "7.95 ms", "0.043 ms". */
export function formatMs(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return `${formatNum(v, significantDigits(v))} ms`;
}

/** A duration given in ms, in the unit a person would say: "850 ms", "1.98 s", "2 min 5 s". */
export function formatDuration(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const abs = Math.abs(v);
  if (abs < 1000) return formatMs(v);
  if (abs < 60_000) return `${formatNum(v / 1000, significantDigits(v / 1000))} s`;
  const totalS = Math.round(v / 1000);
  return `${Math.trunc(totalS / 60)} min ${Math.abs(totalS % 60)} s`;
}

/** A share in [0, 1] as a percentage: whole when it is, else to two decimals ("100%", "99.5%", "0.44%"). */
export function formatPct(share: number | null | undefined, maxDigits = 2): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return '–';
  return `${formatNum(share * 100, maxDigits)}%`;
}

/** A rate or other figure with about three significant digits and an optional unit: "2.75 req/s", "1,024 tok/s". */
export function formatFigure(v: number | null | undefined, unit = ''): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const text = formatNum(v, significantDigits(v));
  return unit ? `${text} ${unit}` : text;
}
