// The interface every load model implements (one file per model, k6-style), and time helpers.
import type { Phase, TraceRow } from '../plan.js';
import type { Rng } from '../rng.js';

/** One step of a closed-loop target: from `atNs` (from run start) on, keep `value` in flight. */
export interface ConcurrencyStep {
  atNs: number;
  value: number;
}

/** A load model turns one phase into arrivals (open loop) or concurrency steps (closed loop). */
export interface LoadModel {
  readonly closedLoop: boolean;
  /**
   * Arrival times of the phase in integer ns from the run start, ascending, each handed to `emit`
   * (no array: the schedule counts them first, then fills one array of exactly that size).
   */
  arrivals?(phase: Phase, rng: Rng, emit: (tNs: number) => void): void;
  /** Concurrency steps of the phase; the last step of the phase ends at its end. */
  concurrency?(phase: Phase, rng: Rng): ConcurrencyStep[];
  /** Replay models (trace.ts): arrival times of rows read from a file, ascending. */
  replay?(rows: readonly TraceRow[]): number[];
}

/** Seconds from the run start to integer nanoseconds (exact in a double below 2^53 ns ≈ 104 days). */
export function secondsToNs(s: number): number {
  return Math.round(s * 1e9);
}
