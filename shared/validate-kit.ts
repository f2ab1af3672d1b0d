// The validation toolkit: a context that carries the JSON path and collects every problem,
// and small typed field readers. Used by every file-format validator (plans now; experiments and
// sweeps later), so each reports all problems at once in the same `<path>: <what>` form.

export type Obj = Record<string, unknown>;

/** Where we are in the document; children share `problems` so nothing needs merging. */
export interface Ctx {
  readonly path: string;
  readonly problems: string[];
}

export interface NumRule {
  min?: number;
  exclusiveMin?: number;
  max?: number;
  integer?: boolean;
  optional?: boolean;
}

export interface StrRule {
  optional?: boolean;
  maxLength?: number;
  pattern?: RegExp;
  /** Said when `pattern` does not match. */
  hint?: string;
}

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function child(ctx: Ctx, key: string | number): Ctx {
  return { path: joinPath(ctx.path, key), problems: ctx.problems };
}

// Keys that are not identifiers (header names, typos with spaces) are quoted so the path stays unambiguous.
export function joinPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return `${path || '$'}[${JSON.stringify(key)}]`;
  return path === '' ? key : `${path}.${key}`;
}

export function report(ctx: Ctx, message: string): void {
  ctx.problems.push(`${ctx.path || '$'}: ${message}`);
}

// Returns undefined so a failed check can `return fail(...)` and callers skip dependent rules.
export function fail(ctx: Ctx, message: string): undefined {
  report(ctx, message);
  return undefined;
}

export function quoted(options: readonly string[], joiner = ', '): string {
  return options.map((o) => JSON.stringify(o)).join(joiner);
}

/** The value at `key`; absent (or undefined) reports `is required` unless optional. */
export function field(ctx: Ctx, o: Obj, key: string, optional = false): unknown {
  const v = Object.hasOwn(o, key) ? o[key] : undefined;
  if (v === undefined && !optional) report(child(ctx, key), 'is required');
  return v;
}

export function num(ctx: Ctx, o: Obj, key: string, rule: NumRule = {}): number | undefined {
  const v = field(ctx, o, key, rule.optional);
  return v === undefined ? undefined : checkNum(child(ctx, key), v, rule);
}

export function checkNum(ctx: Ctx, v: unknown, rule: NumRule): number | undefined {
  if (typeof v !== 'number') return fail(ctx, 'must be a number');
  if (!Number.isFinite(v)) return fail(ctx, 'must be a finite number');
  if (rule.integer && !Number.isInteger(v)) return fail(ctx, 'must be an integer');
  if (rule.integer && !Number.isSafeInteger(v)) return fail(ctx, 'must be a safe integer');
  if (rule.exclusiveMin !== undefined && v <= rule.exclusiveMin) return fail(ctx, `must be > ${rule.exclusiveMin}`);
  if (rule.min !== undefined && v < rule.min) return fail(ctx, `must be >= ${rule.min}`);
  if (rule.max !== undefined && v > rule.max) return fail(ctx, `must be <= ${rule.max}`);
  return v;
}

export function str(ctx: Ctx, o: Obj, key: string, rule: StrRule = {}): string | undefined {
  const v = field(ctx, o, key, rule.optional);
  if (v === undefined) return undefined;
  const c = child(ctx, key);
  if (typeof v !== 'string') return fail(c, 'must be a string');
  if (v === '') return fail(c, 'must not be empty');
  if (rule.maxLength !== undefined && v.length > rule.maxLength) return fail(c, `must be at most ${rule.maxLength} characters`);
  if (rule.pattern && !rule.pattern.test(v)) return fail(c, rule.hint ?? `must match ${rule.pattern}`);
  return v;
}

export function bool(ctx: Ctx, o: Obj, key: string, optional = false): boolean | undefined {
  const v = field(ctx, o, key, optional);
  if (v === undefined || typeof v === 'boolean') return v;
  return fail(child(ctx, key), 'must be a boolean');
}

export function oneOf<T extends string>(ctx: Ctx, o: Obj, key: string, options: readonly T[], optional = false): T | undefined {
  const v = field(ctx, o, key, optional);
  if (v === undefined) return undefined;
  if (options.some((option) => option === v)) return v as T;
  return fail(child(ctx, key), options.length === 1 ? `must be ${quoted(options)}` : `must be one of ${quoted(options)}`);
}

/** Checks the object at `key` with `check`; returns what `check` returns. */
export function obj<R>(ctx: Ctx, o: Obj, key: string, check: (ctx: Ctx, o: Obj) => R, optional = false): R | undefined {
  const v = field(ctx, o, key, optional);
  if (v === undefined) return undefined;
  const c = child(ctx, key);
  return isObj(v) ? check(c, v) : fail(c, 'must be an object');
}

/** Checks each object of the array at `key`; returns one result per item (undefined for non-objects). */
export function list<R>(
  ctx: Ctx,
  o: Obj,
  key: string,
  check: (ctx: Ctx, o: Obj) => R,
  rule: { optional?: boolean; nonEmpty?: boolean } = {},
) {
  const v = field(ctx, o, key, rule.optional);
  if (v === undefined) return undefined;
  const c = child(ctx, key);
  if (!Array.isArray(v)) return fail(c, 'must be an array');
  if (rule.nonEmpty && v.length === 0) return fail(c, 'must not be empty');
  return v.map((item: unknown, i) => (isObj(item) ? check(child(c, i), item) : fail(child(c, i), 'must be an object')));
}

// Typos must not pass silently: an unknown `promt` would otherwise just mean "use the default".
export function knownKeys(ctx: Ctx, o: Obj, keys: readonly string[]): void {
  for (const key of Object.keys(o)) {
    if (!keys.includes(key)) report(child(ctx, key), `unknown key${suggestion(key, keys)}`);
  }
}

export function suggestion(word: string, candidates: readonly string[]): string {
  let best: { key: string; distance: number } | undefined;
  for (const key of candidates) {
    const distance = editDistance(word, key);
    if (distance <= 2 && distance < word.length && (!best || distance < best.distance)) best = { key, distance };
  }
  return best ? ` (did you mean "${best.key}"?)` : '';
}

export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** Each key of T spelled once; `Record<keyof T, true>` makes the compiler reject missing or extra keys. */
export function keysOf<T>(keys: Record<keyof T, true>): readonly string[] {
  return Object.keys(keys);
}

// Reports the second and later use of a name, pointing at the first.
export function noDuplicates(ctx: Ctx, names: readonly (string | undefined)[] | undefined): void {
  const first = new Map<string, number>();
  names?.forEach((name, i) => {
    if (name === undefined) return;
    const seen = first.get(name);
    if (seen === undefined) first.set(name, i);
    else report(child(child(ctx, i), 'name'), `duplicate ${JSON.stringify(name)} (first used by ${child(ctx, seen).path})`);
  });
}

// ---- rules, one function per object kind
