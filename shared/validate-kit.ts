// The validation toolkit of every file format (plans, experiments, sweeps): a problem carries its
// JSON path as segments, rules report into a context that shares one list, and the list is shown
// as `<path>: <what>` lines in one order. The shapes themselves are checked by schema-problems.ts.

export type Obj = Record<string, unknown>;

/** One step of a JSON path: an object key or an array index. */
export type Segment = string | number;

/** One thing wrong with a document, where it is. */
export interface Problem {
  readonly at: readonly Segment[];
  readonly message: string;
}

/** Where we are in the document; children share `problems` so nothing needs merging. */
export interface Ctx {
  readonly at: readonly Segment[];
  readonly problems: Problem[];
}

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A context at the root of a document, with no problems yet. */
export function rootCtx(): Ctx {
  return { at: [], problems: [] };
}

export function child(ctx: Ctx, key: Segment): Ctx {
  return { at: [...ctx.at, key], problems: ctx.problems };
}

export function report(ctx: Ctx, message: string): void {
  ctx.problems.push({ at: ctx.at, message });
}

/** The path as users read it: `classes[0].load`, `$["odd key"]`, `$[0]` in a list at the root, `$` for the root. */
export function pathOf(at: readonly Segment[]): string {
  return at.reduce<string>(joinPath, '') || '$';
}

// Keys that are not identifiers (header names, typos with spaces) are quoted so the path stays unambiguous.
function joinPath(path: string, key: Segment): string {
  if (typeof key === 'number') return `${path || '$'}[${key}]`;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return `${path || '$'}[${JSON.stringify(key)}]`;
  return path === '' ? key : `${path}.${key}`;
}

/**
 * The problems as `<path>: <what>` lines: by top-level field in the order the format defines its
 * fields (unknown keys first), the items of a list by index, and otherwise in the order found (a
 * field's shape before the rules that relate it to other fields).
 */
export function problemLines(problems: readonly Problem[], fields: readonly string[]): string[] {
  const firstSeen = new Map<string, number>();
  problems.forEach((p, i) => {
    for (let d = 1; d <= p.at.length; d++) if (!firstSeen.has(pathOf(p.at.slice(0, d)))) firstSeen.set(pathOf(p.at.slice(0, d)), i);
  });
  const rank = (p: Problem, i: number): number[] => [
    ...p.at.map((seg, d) =>
      d === 0 ? fields.indexOf(String(seg)) : typeof seg === 'number' ? seg : firstSeen.get(pathOf(p.at.slice(0, d + 1)))!,
    ),
    -1,
    i,
  ];
  const ranked = problems.map((p, i) => ({ p, key: rank(p, i) }));
  ranked.sort((a, b) => compareKeys(a.key, b.key));
  return ranked.map(({ p }) => `${pathOf(p.at)}: ${p.message}`);
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

export function quoted(options: readonly string[], joiner = ', '): string {
  return options.map((o) => JSON.stringify(o)).join(joiner);
}

/** ` (did you mean "x"?)` for the nearest candidate within two edits, else nothing. */
export function suggestion(word: string, candidates: readonly string[]): string {
  let best: { key: string; distance: number } | undefined;
  for (const key of candidates) {
    const distance = editDistance(word, key);
    if (distance <= 2 && distance < word.length && (!best || distance < best.distance)) best = { key, distance };
  }
  return best ? ` (did you mean "${best.key}"?)` : '';
}

function editDistance(a: string, b: string): number {
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

/** Reports the second and later use of a name (`<item>.<key>`, or the item itself), pointing at the first. */
export function noDuplicates(ctx: Ctx, items: unknown, key?: string): void {
  if (!Array.isArray(items)) return;
  const first = new Map<unknown, number>();
  items.forEach((item: unknown, i) => {
    const name = key === undefined ? item : isObj(item) ? item[key] : undefined;
    if (typeof name !== 'string') return;
    const seen = first.get(name);
    const at = key === undefined ? child(ctx, i) : child(child(ctx, i), key);
    if (seen === undefined) first.set(name, i);
    else report(at, `duplicate ${JSON.stringify(name)}${key === undefined ? '' : ` (first used by ${pathOf(child(ctx, seen).at)})`}`);
  });
}

/** The finite number at `key`, or undefined (its shape problems are reported by the schema). */
export function numAt(o: unknown, key: string): number | undefined {
  const v = isObj(o) ? o[key] : undefined;
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** Runs `rule` on each object item of the array at `key` (other items are shape problems). */
export function eachObj(ctx: Ctx, o: Obj, key: string, rule: (ctx: Ctx, item: Obj) => void): void {
  const items = o[key];
  if (!Array.isArray(items)) return;
  items.forEach((item: unknown, i) => {
    if (isObj(item)) rule(child(child(ctx, key), i), item);
  });
}
