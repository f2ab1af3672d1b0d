// Typed reads from parsed JSON whose keys may be absent (run.json grows by branch; analysis.json
// arrives from disk): each returns a value of the asked type or a neutral default, never throws.

/** A JSON object. */
export type Obj = Record<string, unknown>;

/** `v` if it is a plain object, else an empty one. */
export function obj(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

/** `v` if it is an array, else an empty one. */
export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** `v` as a finite number (bigint converted), else null. */
export function numOrNull(v: unknown): number | null {
  if (typeof v === 'bigint') return Number(v);
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** `v` as a bigint (integers converted), else null. */
export function bigOrNull(v: unknown): bigint | null {
  if (typeof v === 'bigint') return v;
  return typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : null;
}

/** `v` if it is a string, else null. */
export function strOrNull(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

/** `v` if it is a boolean, else null. */
export function boolOrNull(v: unknown): boolean | null {
  return typeof v === 'boolean' ? v : null;
}

/** `{median, min, max}` if `v` has that shape (the analysis' per-arm figures). */
export function spread(v: unknown): { median: number | null; min: number | null; max: number | null } | null {
  const o = obj(v);
  if (!('median' in o) || !('min' in o) || !('max' in o)) return null;
  return { median: numOrNull(o.median), min: numOrNull(o.min), max: numOrNull(o.max) };
}
