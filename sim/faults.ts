// Fault injection: each generation request gets at most one fault, chosen by a counter-based PRNG
// keyed by (seed, arrival index), so a run with the same seed and arrival order fails identically.

/** Every fault the simulator can inject; these are also the accepted `x-sim-fault` values. */
export const FAULT_KINDS = ['429', '5xx', 'reset', 'malformed', 'truncate', 'no-usage', 'hang', 'stall', 'canary'] as const;

/** One injectable fault. */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Probability in [0, 1] per fault kind; missing kinds never fire. */
export type FaultRates = Partial<Record<FaultKind, number>>;

/** Header value that forces a request to run without any fault. */
export const NO_FAULT_HEADER_VALUE = 'none';

/** Whether `value` names a fault kind. */
export function isFaultKind(value: string): value is FaultKind {
  return (FAULT_KINDS as readonly string[]).includes(value);
}

/** Result of parsing one `--fault NAME=VALUE` flag. */
export type FaultFlag = { kind: FaultKind; rate: number } | { stallMs: number };

/** Parses `429-rate=0.1` or `stall-ms=500`; throws with a readable message otherwise. */
export function parseFaultFlag(spec: string): FaultFlag {
  const match = /^([a-z0-9-]+)=(.+)$/.exec(spec.trim());
  const value = match ? Number(match[2]) : Number.NaN;
  if (!match || !Number.isFinite(value)) throw new Error(`--fault expects NAME=NUMBER, got '${spec}'`);
  const name = match[1]!;
  if (name === 'stall-ms') return { stallMs: value };
  const kind = name.endsWith('-rate') ? name.slice(0, -'-rate'.length) : '';
  if (!isFaultKind(kind)) {
    throw new Error(`unknown fault '${name}' (expected stall-ms or one of ${FAULT_KINDS.map((k) => `${k}-rate`).join(', ')})`);
  }
  return { kind, rate: value };
}

/** Problems with a set of fault rates (each rate in [0, 1], and at most 1 in total). */
export function faultRateProblems(rates: FaultRates): string[] {
  const problems: string[] = [];
  let total = 0;
  for (const [kind, rate] of Object.entries(rates)) {
    if (!isFaultKind(kind)) problems.push(`faults.${kind}: unknown fault`);
    else if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) problems.push(`faults.${kind}: rate must be in [0, 1]`);
    else total += rate;
  }
  if (total > 1 + 1e-9) problems.push(`faults: rates sum to ${total}, which exceeds 1 (at most one fault per request)`);
  return problems;
}

/** Uniform in [0, 1) for the `index`-th arrival under `seed`: a pure function, no shared state. */
export function uniformAt(seed: number, index: number): number {
  return mix32((mix32(seed >>> 0) + Math.imul(index, 0x9e3779b9)) >>> 0) / 4294967296;
}

/** The fault for the `index`-th arrival: kinds take consecutive slices of [0, 1) in FAULT_KINDS order. */
export function pickFault(rates: FaultRates, seed: number, index: number): FaultKind | undefined {
  const u = uniformAt(seed, index);
  let edge = 0;
  for (const kind of FAULT_KINDS) {
    edge += rates[kind] ?? 0;
    if (u < edge) return kind;
  }
  return undefined;
}

/** The token index at which a mid-stream fault acts, for a response of `outputTokens` tokens. */
export function faultTokenIndex(kind: FaultKind, outputTokens: number): number {
  // Reset after "a couple" of tokens, truncate and stall half-way; never past the last token so
  // the fault always happens before a normal finish.
  const last = Math.max(0, outputTokens - 1);
  if (kind === 'reset') return Math.min(2, last);
  return Math.min(Math.floor(outputTokens / 2), last);
}

// A 32-bit integer finaliser (from the "lowbias32" family): good avalanche at two multiplies.
function mix32(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}
