// The one global schedule: from seed + plan, every class's arrival times (open loop) or
// concurrency steps (closed loop). Pure and deterministic, so the coordinator and every agent
// compute the same thing and `schedule_sha256` proves which load was offered.

import type { Hash } from 'node:crypto';
import { createHash } from 'node:crypto';
import { LOAD_MODELS } from './load/index.js';
import type { ConcurrencyStep, LoadModel } from './load/model.js';
import { secondsToNs } from './load/model.js';
import { loraPicker } from './lora.js';
import type { Phase, Plan } from './plan.js';
import { ClassRequests, variesPerRequest } from './request-shape.js';
import type { Rng } from './rng.js';
import { rngFromKey } from './rng.js';
import type { SessionShapes } from './session-shape.js';
import { sessionShapes } from './session-shape.js';

/** One class's share of the global schedule. */
export interface ClassSchedule {
  className: string;
  closedLoop: boolean;
  /**
   * Open loop: intended send times, integer ns from the run start (exact in a double), ascending;
   * index = request_index. A typed array of exactly their count: 8 bytes an arrival, built
   * without a transient copy (a run of 10M requests holds 80 MB here, on the coordinator and on
   * every agent).
   */
  arrivalsNs: Float64Array;
  /** Closed loop: the target in-flight count as steps; a final step to 0 ends the last phase. */
  concurrency: ConcurrencyStep[];
  /**
   * Open loop, when requests of the class differ (length distributions, a dataset, a trace): per
   * request (same index as arrivalsNs) its prompt tokens, output tokens and content choice (dataset
   * record index, or the trace row's hash ids). Absent when every request is alike.
   */
  requests?: { inputTokens: number[]; outputTokens: number[]; records: number[]; hashIds: number[][] };
  /** Model `sessions`: each session's turns and their lengths and think times (arrivalsNs are the session starts). */
  sessions?: SessionShapes;
  /** A class with adapters: each open-loop request's adapter index, or (closed loop) the weights that decide it. */
  adapters?: { perRequest: number[]; weights: string };
}

/** The whole plan's schedule. */
export interface GlobalSchedule {
  classes: ClassSchedule[];
  sha256: string;
}

/** Builds the global schedule of `plan`. Each phase draws from its own seeded stream. */
export function buildSchedule(plan: Plan): GlobalSchedule {
  const classes = plan.classes.map((cls): ClassSchedule => {
    const model = LOAD_MODELS[cls.load.model];
    const concurrency: ConcurrencyStep[] = [];
    const phases = [...cls.load.phases].sort((a, b) => a.start_s - b.start_s);
    if (model.closedLoop && !model.replay) {
      phases.forEach((phase, i) => {
        concurrency.push(...model.concurrency!(phase, phaseRng(plan, cls.name, i)));
        concurrency.push({ atNs: secondsToNs(phase.start_s + phase.duration_s), value: 0 });
      });
    }
    const arrivalsNs = model.replay
      ? Float64Array.from(model.replay(plan.inputs?.traces[cls.name] ?? []))
      : model.closedLoop
        ? new Float64Array(0)
        : openLoopArrivals(plan, cls.name, phases, model.arrivals!);
    const out: ClassSchedule = { className: cls.name, closedLoop: model.closedLoop, arrivalsNs, concurrency: mergeSteps(concurrency) };
    if (!model.closedLoop && variesPerRequest(cls)) out.requests = requestShapes(new ClassRequests(plan, cls), arrivalsNs.length);
    if (cls.load.model === 'sessions') out.sessions = sessionShapes(plan.seed, cls, arrivalsNs.length);
    const picker = loraPicker(plan.seed, cls);
    if (picker) {
      const perRequest = model.closedLoop ? [] : Array.from({ length: arrivalsNs.length }, (_, i) => picker.at(i));
      out.adapters = { perRequest, weights: picker.adapters.map((a) => `${a.model}=${a.weight}`).join(',') };
    }
    return out;
  });
  return { classes, sha256: scheduleSha256(classes) };
}

/** Each phase draws from its own seeded stream: the same draws however often it is replayed. */
function phaseRng(plan: Plan, className: string, phaseIndex: number): Rng {
  return rngFromKey(`${plan.seed}:${className}:${phaseIndex}`);
}

/**
 * Every phase's arrivals in one typed array of exactly their count: the phases are drawn twice from
 * their seeded streams, once to count and once to fill, so no growing array (and no copy of one)
 * ever holds them (a 10M-request plan peaked at ~390 MB of heap when each phase was pushed into an
 * array and copied into another, for 80 MB kept).
 */
function openLoopArrivals(
  plan: Plan,
  className: string,
  phases: readonly Phase[],
  arrivals: NonNullable<LoadModel['arrivals']>,
): Float64Array {
  let count = 0;
  phases.forEach((phase, i) => {
    arrivals(phase, phaseRng(plan, className, i), () => {
      count++;
    });
  });
  const out = new Float64Array(count);
  let n = 0;
  phases.forEach((phase, i) => {
    arrivals(phase, phaseRng(plan, className, i), (t) => {
      out[n++] = t;
    });
  });
  if (n !== count) throw new Error(`the arrivals of class ${className} differ between two draws of the same seed`);
  return out;
}

function requestShapes(shapes: ClassRequests, n: number): NonNullable<ClassSchedule['requests']> {
  const out: NonNullable<ClassSchedule['requests']> = { inputTokens: [], outputTokens: [], records: [], hashIds: [] };
  for (let i = 0; i < n; i++) {
    const s = shapes.at(i);
    out.inputTokens.push(s.inputTokens);
    out.outputTokens.push(s.outputTokens);
    if (s.record !== undefined) out.records.push(s.record);
    if (s.hashIds !== undefined) out.hashIds.push([...s.hashIds]);
  }
  return out;
}

/** Drops steps that repeat the previous value and, for equal times, keeps the later one. */
function mergeSteps(steps: ConcurrencyStep[]): ConcurrencyStep[] {
  const out: ConcurrencyStep[] = [];
  for (const s of steps) {
    if (out.length > 0 && out.at(-1)!.atNs === s.atNs) out.pop();
    if (out.at(-1)?.value !== s.value) out.push(s);
  }
  return out;
}

/**
 * SHA-256 over every class's name, then its arrival times and steps as int64 little-endian; for a
 * class whose requests differ, then its per-request prompt and output tokens, dataset records and
 * trace hash ids, for a class with adapters its weights and each request's adapter, and for
 * sessions every session's turns, message and reply lengths and think times (a class of
 * identical requests hashes as it always did).
 */
export function scheduleSha256(
  classes: readonly ClassSchedule[],
  /** The arrival times hashed for a class: its own by default, or others read by index (offered-arrivals.ts). */
  arrivalsOf: (c: ClassSchedule) => IntSequence = (c) => ({ length: c.arrivalsNs.length, at: (i) => c.arrivalsNs[i]! }),
): string {
  const h = createHash('sha256');
  for (const c of classes) {
    h.update(`${c.className}\n${c.closedLoop ? 'closed' : 'open'}\n`);
    updateInt64(h, arrivalsOf(c));
    h.update(int64Bytes(c.concurrency.flatMap((s) => [s.atNs, s.value])));
    if (c.requests) {
      h.update(int64Bytes(c.requests.inputTokens));
      h.update(int64Bytes(c.requests.outputTokens));
      h.update(int64Bytes(c.requests.records));
      for (const ids of c.requests.hashIds) h.update(int64Bytes(ids));
    }
    if (c.adapters) {
      h.update(`adapters\n${c.adapters.weights}\n`);
      h.update(int64Bytes(c.adapters.perRequest));
    }
    if (c.sessions) {
      h.update(int64Bytes(c.sessions.turns));
      for (const part of [c.sessions.userTokens, c.sessions.outputTokens, c.sessions.thinkNs])
        for (const xs of part) h.update(int64Bytes(xs));
    }
  }
  return h.digest('hex');
}

/** Integers read by index, so a long sequence can be hashed without an array of it. */
export interface IntSequence {
  readonly length: number;
  at(i: number): number;
}

const HASH_CHUNK = 8192;

// The same bytes as int64Bytes (the length, then each value), fed in chunks of bounded size.
function updateInt64(h: Hash, seq: IntSequence): void {
  const buf = new BigInt64Array(HASH_CHUNK);
  buf[0] = BigInt(seq.length);
  let n = 1;
  for (let i = 0; i < seq.length; i++) {
    if (n === HASH_CHUNK) {
      h.update(new Uint8Array(buf.buffer));
      n = 0;
    }
    buf[n++] = BigInt(seq.at(i));
  }
  h.update(new Uint8Array(buf.buffer, 0, n * 8));
}

function int64Bytes(values: readonly number[]): Uint8Array {
  const arr = new BigInt64Array(values.length + 1);
  arr[0] = BigInt(values.length);
  for (let i = 0; i < values.length; i++) arr[i + 1] = BigInt(values[i]!);
  return new Uint8Array(arr.buffer);
}

/** The concurrency target in force at `tNs` (ns from run start). */
export function concurrencyAt(steps: readonly ConcurrencyStep[], tNs: number): number {
  let value = 0;
  for (const s of steps) {
    if (s.atNs > tNs) break;
    value = s.value;
  }
  return value;
}

/** The open-loop target rate averaged over [fromNs, toNs): arrivals in it / its length. */
export function arrivalsBetween(arrivalsNs: ArrayLike<number>, fromNs: number, toNs: number): number {
  return lowerBound(arrivalsNs, toNs) - lowerBound(arrivalsNs, fromNs);
}

function lowerBound(sorted: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
