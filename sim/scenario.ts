// A load plan's traffic as the offline fit replays it: the plan file's classes (headers, prompt and
// output lengths, open-loop phases) and windows, with a seeded synthetic arrival stream of the same
// statistics as the agents' schedule (Poisson, constant or noisy-sinusoidal rate, domain.md §8).
// The sim reads the plan as data and draws its own arrivals, so it stays independent of shared/.
import { readFileSync } from 'node:fs';
import { fnv1a32 } from './tokenizer.js';

/** A noisy-sinusoidal rate, as in a plan. */
export interface NoisySinusoid {
  pattern: 'noisy-sinusoidal';
  center: number;
  amplitude: number;
  period_s: number;
  noise?: number;
  spike_probability?: number;
  phase_offset?: number;
}

/** One open-loop phase. */
export interface ScenarioPhase {
  start_s: number;
  duration_s: number;
  rate_per_s?: number;
  rate?: NoisySinusoid;
}

/** One class of the plan. */
export interface ScenarioClass {
  name: string;
  headers?: Record<string, string>;
  prompt: { input_tokens: number; output_tokens: number };
  load: { model: string; phases: ScenarioPhase[] };
}

/** The parts of a plan the fit uses. */
export interface Scenario {
  name: string;
  seed: number;
  duration_s: number;
  classes: ScenarioClass[];
  windows: { name: string; start_s: number; end_s: number }[];
}

/** Reads a `loadfleet.plan/v1` file; only open-loop (poisson, constant-rate) classes can be replayed. */
export function readScenario(path: string): Scenario {
  const plan = JSON.parse(readFileSync(path, 'utf8')) as Scenario;
  for (const cls of plan.classes) {
    if (cls.load.model !== 'poisson' && cls.load.model !== 'constant-rate')
      throw new Error(`${path}: class ${cls.name} uses ${cls.load.model}; the fit replays open-loop classes only`);
  }
  return { ...plan, windows: plan.windows ?? [] };
}

/** Arrival times (seconds from the run start) of one class, seeded by plan seed and class name. */
export function arrivalsOf(scenario: Scenario, cls: ScenarioClass): number[] {
  const out: number[] = [];
  cls.load.phases.forEach((phase, i) => {
    const rng = mulberry32(fnv1a32(`${scenario.seed}:${cls.name}:${i}`));
    if (cls.load.model === 'constant-rate') {
      const rate = phase.rate_per_s ?? 0;
      for (let k = 0; k < phase.duration_s * rate; k++) out.push(phase.start_s + k / rate);
      return;
    }
    const rate = phase.rate
      ? noisySinusoid(phase.rate, phase.duration_s, rng)
      : { at: () => phase.rate_per_s ?? 0, max: phase.rate_per_s ?? 0 };
    if (rate.max <= 0) return;
    // Thinning: candidates at the upper bound, each kept with probability rate(t) / max.
    for (let t = -Math.log(1 - rng()) / rate.max; t < phase.duration_s; t += -Math.log(1 - rng()) / rate.max) {
      if (rng() * rate.max < rate.at(t)) out.push(phase.start_s + t);
    }
  });
  return out.sort((a, b) => a - b);
}

// rate(t) = center + amplitude·sin(2πt/period + 2π·offset) + noise, noise redrawn per 0.5 s bucket
// (Gaussian, plus an occasional spike of up to 0.2·center), clamped at 0.
function noisySinusoid(p: NoisySinusoid, durationS: number, rng: () => number): { at: (tS: number) => number; max: number } {
  const sigma = p.noise ?? Math.max(0.05, 0.05 * p.center);
  const buckets = Array.from({ length: Math.max(1, Math.ceil(durationS / 0.5)) }, () => {
    const gaussian = Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
    const spike = rng() < (p.spike_probability ?? 0) ? rng() * 0.2 * p.center : 0;
    return gaussian * sigma + spike;
  });
  const phase = 2 * Math.PI * (p.phase_offset ?? 0);
  const at = (t: number): number => {
    const noise = buckets[Math.min(buckets.length - 1, Math.floor(t / 0.5))]!;
    return Math.max(0, p.center + p.amplitude * Math.sin((2 * Math.PI * t) / p.period_s + phase) + noise);
  };
  return { at, max: p.center + Math.abs(p.amplitude) + Math.max(0, ...buckets) };
}

// A small, fast seeded generator (mulberry32): uniform in [0, 1).
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
