// Rate and concurrency patterns over time (domain.md §8), compiled once per phase so the seeded
// noise is drawn in a fixed order and every agent sees the same curve.
import type { Pattern } from '../plan.js';
import type { Rng } from '../rng.js';

/** Noise and spikes are redrawn per bucket of this length, as in the studies. */
export const NOISE_BUCKET_S = 0.5;

/** A compiled pattern: its value at a time (seconds from the phase start) and an upper bound. */
export interface CompiledPattern {
  valueAt(tS: number): number;
  /** An upper bound of valueAt over the phase (used for thinning). */
  readonly max: number;
}

/** Compiles `pattern` over a phase of `durationS`, drawing its noise from `rng`. */
export function compilePattern(pattern: Pattern, durationS: number, rng: Rng): CompiledPattern {
  switch (pattern.pattern) {
    case 'constant':
      return { valueAt: () => pattern.value, max: pattern.value };
    case 'ramp': {
      const { from, to } = pattern;
      return { valueAt: (t) => from + ((to - from) * Math.min(Math.max(t, 0), durationS)) / durationS, max: Math.max(from, to) };
    }
    case 'noisy-sinusoidal':
      return compileNoisySinusoid(pattern, durationS, rng);
  }
}

function compileNoisySinusoid(p: Extract<Pattern, { pattern: 'noisy-sinusoidal' }>, durationS: number, rng: Rng): CompiledPattern {
  const sigma = p.noise ?? Math.max(0.05, 0.05 * p.center);
  const spikeP = p.spike_probability ?? 0;
  const phase = 2 * Math.PI * (p.phase_offset ?? 0);
  const buckets = new Float64Array(Math.max(1, Math.ceil(durationS / NOISE_BUCKET_S)));
  let maxExtra = 0;
  for (let b = 0; b < buckets.length; b++) {
    // Always draw the spike decision so the noise sequence does not depend on spike_probability.
    const noise = rng.gaussian() * sigma;
    const spikeDraw = rng.next();
    const spikeSize = rng.next() * 0.2 * p.center;
    buckets[b] = noise + (spikeDraw < spikeP ? spikeSize : 0);
    maxExtra = Math.max(maxExtra, buckets[b]!);
  }
  const valueAt = (t: number): number => {
    const b = Math.min(buckets.length - 1, Math.max(0, Math.floor(t / NOISE_BUCKET_S)));
    const ramp = p.ramp_s ? Math.min(1, t / p.ramp_s) : 1;
    const v = (p.center + p.amplitude * Math.sin((2 * Math.PI * t) / p.period_s + phase) + buckets[b]!) * ramp;
    return Math.max(v, 0);
  };
  return { valueAt, max: Math.max(0, p.center + Math.abs(p.amplitude) + maxExtra) };
}
