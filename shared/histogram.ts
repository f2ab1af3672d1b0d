// One fixed HDR histogram configuration everywhere (so `add()` is the fast same-layout path),
// 64-bit float counts (no 32-bit wrap), JS-backed (nothing to destroy), ns values.
import { inflateSync } from 'node:zlib';
import * as hdr from 'hdr-histogram-js';

/** The histogram type used everywhere. */
export type Histogram = hdr.JsHistogram;

/** The one configuration: 1 ns … 1 h in ns, 3 significant digits (≤ 0.05% with median-equivalent values). */
export const HISTOGRAM_CONFIG = {
  lowest_ns: 1,
  highest_ns: 3_600_000_000_000,
  significant_digits: 3,
} as const;

/** A new, empty histogram in the one configuration. */
export function newHistogram(): Histogram {
  const h = new hdr.Float64Histogram(HISTOGRAM_CONFIG.lowest_ns, HISTOGRAM_CONFIG.highest_ns, HISTOGRAM_CONFIG.significant_digits);
  h.autoResize = false;
  return h;
}

/** Records a duration in ns, clamped into the trackable range (a value past 1 h is recorded as 1 h). */
export function recordNs(h: Histogram, valueNs: number): void {
  h.recordValue(valueNs < 0 ? 0 : valueNs > HISTOGRAM_CONFIG.highest_ns ? HISTOGRAM_CONFIG.highest_ns : Math.round(valueNs));
}

/** V2 compressed base64, interoperable with the Java/C/Go/Rust HdrHistogram decoders. */
export function encodeHistogram(h: Histogram): string {
  return hdr.encodeIntoCompressedBase64(h);
}

/** Decodes a histogram encoded by encodeHistogram, with 64-bit counts. */
export function decodeHistogram(encoded: string): Histogram {
  const h = hdr.decodeFromCompressedBase64(encoded, 64, false) as Histogram;
  h.autoResize = false;
  return h;
}

// V2 encoding (HdrHistogram's wire format): a compressed envelope around a 40-byte header and
// ZigZag LEB128 words, positive = a count, negative = a run of empty buckets.
const V2_COMPRESSED_COOKIE_BASE = 0x1c849304;
const V2_COOKIE_BASE = 0x1c849303;
const V2_HEADER_BYTES = 40;

// The internals `add()` itself uses; typed here because the package declares them private.
interface CountsAccess {
  addToCountAtIndex(index: number, value: number): void;
  updatedMaxValue(value: number): void;
  updateMinNonZeroValue(value: number): void;
}

/**
 * Adds an encoded histogram into `into` without building the intermediate histogram that
 * `decodeHistogram` + `mergeInto` would (a full counts array, 270 KB, per merge): the coordinator
 * merges one per agent, class and metric every second. The result is identical to
 * `mergeInto(into, decodeHistogram(encoded))`, counts, total, min and max.
 */
export function addEncoded(into: Histogram, encoded: string): void {
  const env = Buffer.from(encoded, 'base64');
  if (env.length < 8 || ((env.readInt32BE(0) & ~0xf0) | 0) !== V2_COMPRESSED_COOKIE_BASE) throw new Error('not a V2 compressed histogram');
  const raw = inflateSync(env.subarray(8, 8 + env.readInt32BE(4)));
  if (raw.length < V2_HEADER_BYTES || ((raw.readInt32BE(0) & ~0xf0) | 0) !== V2_COOKIE_BASE) throw new Error('not a V2 histogram payload');
  const payloadEnd = V2_HEADER_BYTES + raw.readInt32BE(4);
  if (raw.readInt32BE(12) !== into.numberOfSignificantValueDigits || Number(raw.readBigInt64BE(16)) !== HISTOGRAM_CONFIG.lowest_ns)
    throw new Error('encoded histogram has another configuration');
  const access = into as unknown as CountsAccess;
  let pos = V2_HEADER_BYTES;
  let index = 0;
  let total = 0;
  let minIndex = -1;
  let maxIndex = -1;
  while (pos < payloadEnd) {
    // LEB128: 7 bits a byte (the 9th byte carries 8); arithmetic, not bit ops, past 2^31.
    let value = 0;
    let scale = 1;
    for (let b = 0; b < 9; b++) {
      const byte = raw[pos++]!;
      if (b === 8 || byte < 0x80) {
        value += byte * scale;
        break;
      }
      value += (byte & 0x7f) * scale;
      scale *= 128;
    }
    const word = value % 2 === 0 ? value / 2 : -(value + 1) / 2;
    if (word < 0) {
      index -= word;
      continue;
    }
    if (word > 0) {
      if (index >= into.countsArrayLength) throw new Error("encoded histogram includes values outside this histogram's range");
      access.addToCountAtIndex(index, word);
      total += word;
      maxIndex = index;
      if (minIndex === -1 && index !== 0) minIndex = index;
    }
    index++;
  }
  into.setTotalCount(into.totalCount + total);
  if (maxIndex >= 0) access.updatedMaxValue(Math.max(into.maxValue, into.highestEquivalentValue(into.valueFromIndex(maxIndex))));
  if (minIndex >= 0) access.updateMinNonZeroValue(Math.min(into.minNonZeroValue, into.valueFromIndex(minIndex)));
}

/** Adds `from` into `into` (histograms, never percentiles, are merged). */
export function mergeInto(into: Histogram, from: Histogram): void {
  into.add(from);
}

/**
 * Nearest-rank percentiles (rank = ceil(q·n), as the studies define them; q = 0 gives the min,
 * q = 1 the max) read from the counts alone, reported as the median equivalent value of the
 * bucket (≤ 0.05% from any value in it). Reading only counts makes a merge give exactly the
 * figures of one histogram fed every value; HdrHistogram's own min/max become bucket edges after
 * a decode or a merge, so the extremes are read the same way as the percentiles.
 * HdrHistogram's own getValueAtPercentile rounds the rank and reports the bucket's top instead.
 */
export function percentilesNs(h: Histogram, quantiles: readonly number[]): number[] {
  const n = h.totalCount;
  if (n === 0) return new Array<number>(quantiles.length).fill(Number.NaN);
  return valuesAtRanksNs(
    h,
    quantiles.map((q) => Math.min(n, Math.max(1, Math.ceil(q * n - 1e-9)))),
  );
}

/**
 * The values at 1-based ranks (1 … totalCount) of a histogram, each the median-equivalent value
 * of the bucket holding that rank (so within the histogram's precision of the exact value); NaN
 * for a rank the histogram does not hold.
 */
export function valuesAtRanksNs(h: Histogram, ranks: readonly number[]): number[] {
  const out = new Array<number>(ranks.length).fill(Number.NaN);
  const order = ranks
    .map((rank, i) => ({ i, rank }))
    .filter((x) => x.rank >= 1 && x.rank <= h.totalCount)
    .sort((a, b) => a.rank - b.rank);
  let k = 0;
  let cumulative = 0;
  for (let idx = 0; idx < h.countsArrayLength && k < order.length; idx++) {
    cumulative += h.getCountAtIndex(idx);
    while (k < order.length && cumulative >= order[k]!.rank) {
      out[order[k]!.i] = h.medianEquivalentValue(h.valueFromIndex(idx));
      k++;
    }
  }
  return out;
}

/** The quantiles every distribution reports. */
export const REPORTED_QUANTILES = [0.5, 0.9, 0.95, 0.99] as const;

/** A distribution summary in milliseconds, the `<m>_…_ms` fields of run.json. */
export interface DistributionMs {
  samples: number;
  mean_ms: number | null;
  stddev_ms: number | null;
  min_ms: number | null;
  p50_ms: number | null;
  p90_ms: number | null;
  p95_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
}

/** Summarises a histogram of ns values in ms; an empty histogram gives nulls, never zeros. */
export function summarizeMs(h: Histogram): DistributionMs {
  const n = h.totalCount;
  if (n === 0) {
    return {
      samples: 0,
      mean_ms: null,
      stddev_ms: null,
      min_ms: null,
      p50_ms: null,
      p90_ms: null,
      p95_ms: null,
      p99_ms: null,
      max_ms: null,
    };
  }
  const [min, p50, p90, p95, p99, max] = percentilesNs(h, [0, ...REPORTED_QUANTILES, 1]).map(nsToMs);
  return {
    samples: n,
    mean_ms: nsToMs(h.mean),
    stddev_ms: nsToMs(h.stdDeviation),
    min_ms: min ?? null,
    p50_ms: p50 ?? null,
    p90_ms: p90 ?? null,
    p95_ms: p95 ?? null,
    p99_ms: p99 ?? null,
    max_ms: max ?? null,
  };
}

/** ns to ms rounded to the µs (a finer figure would claim precision the clocks don't have). */
export function nsToMs(ns: number): number {
  return Math.round(ns / 1e3) / 1e3;
}

/** The 0-based index of the nearest-rank q-quantile among n sorted values: ceil(q·n) − 1, clamped to [0, n−1]. */
export function nearestRankIndex(n: number, q: number): number {
  return Math.min(n - 1, Math.max(0, Math.ceil(q * n - 1e-9) - 1));
}

/** Exact nearest-rank percentile of raw values: index ceil(q·n) − 1, clamped to [0, n−1]. */
export function nearestRank(sortedAscending: ArrayLike<number>, q: number): number {
  const n = sortedAscending.length;
  if (n === 0) return Number.NaN;
  return sortedAscending[nearestRankIndex(n, q)]!;
}
