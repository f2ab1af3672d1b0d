// Seeded randomness that is identical on every machine and every run: seeds come from SHA-256 of
// a string (never a per-process randomised hash) and the generator is a small, fast xoshiro128**.
import { createHash } from 'node:crypto';

/** A deterministic source of uniform and derived random numbers. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Exponential with the given rate (mean 1/rate). */
  exponential(rate: number): number;
  /** Standard normal (Box–Muller). */
  gaussian(): number;
}

/** A generator seeded from SHA-256 of `key` (e.g. `"42:realtime"`). */
export function rngFromKey(key: string): Rng {
  const digest = createHash('sha256').update(key).digest();
  const s = new Uint32Array([digest.readUInt32LE(0), digest.readUInt32LE(4), digest.readUInt32LE(8), digest.readUInt32LE(12)]);
  if ((s[0]! | s[1]! | s[2]! | s[3]!) === 0) s[0] = 1; // xoshiro's only invalid state
  return new Xoshiro128(s);
}

class Xoshiro128 implements Rng {
  private spareGaussian: number | undefined;
  constructor(private readonly s: Uint32Array) {}

  next(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1]!, 5), 7), 9) >>> 0;
    const t = s[1]! << 9;
    s[2]! ^= s[0]!;
    s[3]! ^= s[1]!;
    s[1]! ^= s[2]!;
    s[0]! ^= s[3]!;
    s[2]! ^= t;
    s[3] = rotl(s[3]!, 11);
    return result / 4294967296;
  }

  exponential(rate: number): number {
    // 1 - u is in (0, 1], so the log is finite.
    return -Math.log(1 - this.next()) / rate;
  }

  gaussian(): number {
    if (this.spareGaussian !== undefined) {
      const v = this.spareGaussian;
      this.spareGaussian = undefined;
      return v;
    }
    const u1 = 1 - this.next();
    const u2 = this.next();
    const r = Math.sqrt(-2 * Math.log(u1));
    this.spareGaussian = r * Math.sin(2 * Math.PI * u2);
    return r * Math.cos(2 * Math.PI * u2);
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
