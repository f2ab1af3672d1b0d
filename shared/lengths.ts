// Token counts drawn per request (plan `prompt.input_tokens` / `output_tokens`). A request's draw
// comes from its own SHA-256-seeded stream ("<seed>:<class>:<which>:<request_index>"), so any agent
// computes the same length for a request index without knowing what the others drew.
import type { LengthDistribution, LengthSpec } from './plan.js';
import type { Rng } from './rng.js';
import { rngFromKey } from './rng.js';

/** Which of a request's lengths a draw is for (part of its seed key); sessions add turn-qualified kinds. */
export type LengthKind = 'input_tokens' | 'output_tokens' | (string & {});

/** True when the spec is one fixed number (no per-request draws needed). */
export function isFixedLength(spec: LengthSpec | undefined): spec is number {
  return typeof spec === 'number';
}

/** The lower and upper clamp of a distribution (every draw lands in [lo, hi]). */
export function lengthBounds(d: LengthDistribution): { lo: number; hi: number } {
  switch (d.distribution) {
    case 'uniform':
      return { lo: d.min, hi: d.max };
    case 'histogram':
      return { lo: Math.min(...d.buckets.map((b) => b[0])), hi: Math.max(...d.buckets.map((b) => b[0])) };
    default:
      return { lo: Math.max(1, d.min ?? 1), hi: d.max ?? Number.MAX_SAFE_INTEGER };
  }
}

/** One draw from `spec` with `rng`: an integer ≥ 1. */
export function drawLength(spec: LengthSpec, rng: Rng): number {
  if (typeof spec === 'number') return spec;
  const { lo, hi } = lengthBounds(spec);
  const clamp = (x: number): number => Math.min(hi, Math.max(lo, Math.round(x)));
  switch (spec.distribution) {
    case 'uniform':
      // Integers min..max inclusive, each with probability 1 / (max − min + 1).
      return Math.min(spec.max, spec.min + Math.floor(rng.next() * (spec.max - spec.min + 1)));
    case 'normal':
      return clamp(spec.mean + spec.stddev * rng.gaussian());
    case 'lognormal':
      return clamp(Math.exp(spec.mu + spec.sigma * rng.gaussian()));
    case 'histogram':
      return drawBucket(spec.buckets, rng.next());
  }
}

// Inverse CDF over the cumulative weights; weights were validated positive.
function drawBucket(buckets: readonly [number, number][], u: number): number {
  const total = buckets.reduce((s, b) => s + b[1], 0);
  let x = u * total;
  for (const [tokens, weight] of buckets) {
    if (x < weight) return tokens;
    x -= weight;
  }
  return buckets.at(-1)![0];
}

/** The length of request `requestIndex` of a class: the same on every agent, for any N. */
export function lengthAt(spec: LengthSpec, seed: number, className: string, kind: LengthKind, requestIndex: number): number {
  if (typeof spec === 'number') return spec;
  return drawLength(spec, rngFromKey(`${seed}:${className}:${kind}:${requestIndex}`));
}

/** A short human description, e.g. "uniform 100–200" (evidence texts). */
export function describeLength(spec: LengthSpec | undefined): string {
  if (spec === undefined) return 'from its trace row, dataset record or session';
  if (typeof spec === 'number') return String(spec);
  switch (spec.distribution) {
    case 'uniform':
      return `uniform ${spec.min}–${spec.max}`;
    case 'normal':
      return `normal(${spec.mean}, ${spec.stddev})`;
    case 'lognormal':
      return `lognormal(mu ${spec.mu}, sigma ${spec.sigma})`;
    case 'histogram':
      return `histogram of ${spec.buckets.length} buckets`;
  }
}

/** The distribution's mean before rounding and clamping (exact for uniform and histogram); undefined when absent. */
export function meanLength(spec: LengthSpec | undefined): number | undefined {
  if (spec === undefined || typeof spec === 'number') return spec;
  switch (spec.distribution) {
    case 'uniform':
      return (spec.min + spec.max) / 2;
    case 'normal':
      return spec.mean;
    case 'lognormal':
      return Math.exp(spec.mu + (spec.sigma * spec.sigma) / 2);
    case 'histogram': {
      const total = spec.buckets.reduce((s, b) => s + b[1], 0);
      return spec.buckets.reduce((s, b) => s + b[0] * b[1], 0) / total;
    }
  }
}
