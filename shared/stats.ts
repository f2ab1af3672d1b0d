// Descriptive statistics over raw per-request values (a few thousand at most): mean, sample
// standard deviation and a normal-approximation 95% CI of the mean, plus the median and 3-decimal
// rounding the analysis reports. Mean and variance are computed exactly (every double is an exact
// binary fraction, summed as BigInt) and rounded once, so the figures are the correctly rounded
// values: the same bits as Python's `statistics.mean`/`stdev`, which the seed benchmark used.
// Naive float sums differ in the last bits and would depend on the order of the requests.

/** z for a two-sided 95% interval under the normal approximation (the seed's method). */
export const Z95 = 1.96;

/** Exact arithmetic mean; NaN for no values. */
export function exactMean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const { ints, exp } = commonScale(values);
  const sum = ints.reduce((a, b) => a + b, 0n);
  const [num, den] = scaled(exp);
  return ratioToDouble(sum * num, BigInt(values.length) * den);
}

/** Sample (n − 1) standard deviation, computed exactly and correctly rounded; NaN below 2 values. */
export function sampleStddev(values: readonly number[]): number {
  const n = BigInt(values.length);
  if (values.length < 2) return Number.NaN;
  const { ints, exp } = commonScale(values);
  const sum = ints.reduce((a, b) => a + b, 0n);
  const sumSq = ints.reduce((a, b) => a + b * b, 0n);
  // Σ(x − x̄)² / (n − 1) = (n·Σx² − (Σx)²) / (n·(n − 1)), in units of 2^(2·exp).
  const [num, den] = scaled(2 * exp);
  return sqrtRatio((n * sumSq - sum * sum) * num, n * (n - 1n) * den);
}

/** Mean with its normal-approximation 95% CI: mean ± 1.96 · s / √n (nulls below 2 values). */
export function meanCi95(values: readonly number[]): {
  mean: number | null;
  stddev: number | null;
  low: number | null;
  high: number | null;
} {
  if (values.length === 0) return { mean: null, stddev: null, low: null, high: null };
  const mean = exactMean(values);
  if (values.length < 2) return { mean, stddev: null, low: null, high: null };
  const stddev = sampleStddev(values);
  const half = (Z95 * stddev) / Math.sqrt(values.length);
  return { mean, stddev, low: mean - half, high: mean + half };
}

/** The median: the middle value, or the mean of the two middle values for an even count; null when empty. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Rounded to 3 decimals, half away from zero on the exact binary value (as toFixed does). */
export function round3(x: number): number {
  return Number(x.toFixed(3));
}

// ---- exact binary fractions

/** Every value as an integer times 2^exp (one exp for all, the smallest). */
function commonScale(values: readonly number[]): { ints: bigint[]; exp: number } {
  const parts = values.map(decompose);
  const exp = Math.min(...parts.map((p) => p.exp));
  return { ints: parts.map((p) => p.mant << BigInt(p.exp - exp)), exp };
}

/** 2^exp as a fraction [num, den]. */
function scaled(exp: number): [bigint, bigint] {
  return exp >= 0 ? [1n << BigInt(exp), 1n] : [1n, 1n << BigInt(-exp)];
}

/** A finite double as mant · 2^exp exactly (mant signed). */
function decompose(x: number): { mant: bigint; exp: number } {
  if (!Number.isFinite(x)) throw new RangeError(`not a finite number: ${x}`);
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const biased = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(view.getUint32(4));
  if (biased !== 0) mant |= 1n << 52n;
  const sign = hi >>> 31 ? -1n : 1n;
  return { mant: sign * mant, exp: biased === 0 ? -1074 : biased - 1075 };
}

function bitLength(b: bigint): number {
  return b === 0n ? 0 : b.toString(2).length;
}

/** (q + a little, if sticky) · 2^exp rounded to the nearest double, ties to even. q > 0. */
function roundToDouble(q: bigint, sticky: boolean, exp: number): number {
  const shift = bitLength(q) - 53;
  let mant = q;
  if (shift > 0) {
    const rest = q & ((1n << BigInt(shift)) - 1n);
    const half = 1n << BigInt(shift - 1);
    mant = q >> BigInt(shift);
    if (rest > half || (rest === half && (sticky || (mant & 1n) === 1n))) mant += 1n;
  }
  const e = exp + Math.max(shift, 0);
  // Two factors so an intermediate power of two cannot underflow or overflow on its own.
  const a = Math.trunc(e / 2);
  return Number(mant) * 2 ** a * 2 ** (e - a);
}

/** p / q correctly rounded (q > 0). */
function ratioToDouble(p: bigint, q: bigint): number {
  if (p === 0n) return 0;
  const negative = p < 0n;
  const abs = negative ? -p : p;
  // Keep ~60 quotient bits: 53 for the result, the rest and the remainder decide the rounding.
  const s = bitLength(abs) - bitLength(q) - 60;
  const num = s >= 0 ? abs : abs << BigInt(-s);
  const den = s >= 0 ? q << BigInt(s) : q;
  const v = roundToDouble(num / den, num % den !== 0n, s);
  return negative ? -v : v;
}

/** √(p / q) correctly rounded (p ≥ 0, q > 0). */
function sqrtRatio(p: bigint, q: bigint): number {
  if (p <= 0n) return 0;
  const k = Math.max(0, Math.ceil((120 - (bitLength(p) - bitLength(q))) / 2));
  const num = p << BigInt(2 * k);
  const a = num / q;
  const r = isqrt(a);
  return roundToDouble(r, num % q !== 0n || r * r !== a, -k);
}

function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = 1n << BigInt(Math.ceil(bitLength(n) / 2));
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}
