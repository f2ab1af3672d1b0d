// Property: the validators of plans, experiments and sweeps never throw, on any JSON value and on
// any mutation of the shipped examples (a value replaced by any JSON, a key deleted, an unknown key
// added); every problem names, in the form users read (`classes[0].load`, `$["odd key"]`), a path
// that exists in the document or is a missing key of an object in it; and a validated plan
// validates again as it came out.
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { PlanInvalidError } from './errors.js';
import { validateArms, validateExperimentDoc } from './experiment-validate.js';
import type { Plan } from './plan.js';
import { parsePlanText } from './plan-load.js';
import { MAX_CLASS_ARRIVALS, validatePlan } from './plan-validate.js';
import { validateSweep } from './sweep-validate.js';

const SOAK = process.env.LOADFLEET_SOAK === '1' ? 10 : 1;
/** The soak round's runs take ten times as long. */
const TIMEOUT_MS = SOAK > 1 ? 600_000 : undefined;

const EXAMPLES = new URL('../examples/', import.meta.url);
const examples = (suffix: string): unknown[] =>
  readdirSync(EXAMPLES)
    .filter((f) => f.endsWith(suffix))
    .sort()
    .map((f) => JSON.parse(readFileSync(new URL(f, EXAMPLES), 'utf8')));
const PLANS = examples('.plan.json');
const EXPERIMENTS = examples('.experiment.json');
const SWEEPS = examples('.sweep.json');

type Segment = string | number;

/** Reads back the path of a `<path>: <what>` line, as pathOf (validate-kit.ts) writes it. */
function parseProblemPath(line: string): Segment[] {
  const at: Segment[] = [];
  let i = 0;
  const ident = (): string => {
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(line.slice(i));
    if (!m) throw new Error(`no path at ${i} in ${JSON.stringify(line)}`);
    i += m[0].length;
    return m[0];
  };
  if (line.startsWith('$')) i = 1;
  else at.push(ident());
  for (;;) {
    if (line[i] === '.') {
      i++;
      at.push(ident());
    } else if (line[i] === '[' && line[i + 1] === '"') {
      let j = i + 2;
      while (line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
      at.push(JSON.parse(line.slice(i + 1, j + 1)) as string);
      if (line[j + 1] !== ']') throw new Error(`unclosed key in ${JSON.stringify(line)}`);
      i = j + 2;
    } else if (line[i] === '[') {
      const m = /^\[(\d+)\]/.exec(line.slice(i));
      if (!m) throw new Error(`bad index at ${i} in ${JSON.stringify(line)}`);
      at.push(Number(m[1]));
      i += m[0].length;
    } else break;
  }
  if (line.slice(i, i + 2) !== ': ') throw new Error(`path not followed by ": " in ${JSON.stringify(line)}`);
  return at;
}

// Plain objects only: a YAML 1.1 value (binary data, a timestamp, a set) is not a container a path may enter.
const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && [Object.prototype, null].includes(Object.getPrototypeOf(v));
const has = (o: object, k: string): boolean => Object.hasOwn(o, k);

/** Whether `at` is in `doc`: every step exists, except that the last may be a missing key of an object. */
function pathIn(doc: unknown, at: readonly Segment[]): boolean {
  let node = doc;
  for (const [d, seg] of at.entries()) {
    const last = d === at.length - 1;
    if (typeof seg === 'number' && Array.isArray(node) && seg < node.length) node = node[seg];
    else if (isObj(node) && has(node, String(seg))) node = node[String(seg)];
    else if (!(last && isObj(node))) return false;
  }
  return true;
}

/** Problem lines checked, so a run that never reached a problem shows as one. */
let checked = 0;

function expectPathsIn(doc: unknown, problems: readonly string[]): void {
  checked += problems.length;
  // What follows the path is words: never an object or a function that leaked into the message.
  for (const line of problems) expect(line, line).not.toMatch(/\[object |native code|^[^:]*: (undefined|null)?$/);
  for (const line of problems) expect(pathIn(doc, parseProblemPath(line)), `${line}\nin ${JSON.stringify(doc)}`).toBe(true);
}

// ---- mutations of a valid document

type Mutation =
  | { at: number; op: 'replace'; value: unknown }
  | { at: number; op: 'delete' }
  | { at: number; op: 'add'; key: string; value: unknown };

/** Every path of a document, containers and leaves, root first. */
function pathsOf(doc: unknown, at: Segment[] = []): Segment[][] {
  const out: Segment[][] = [at];
  if (Array.isArray(doc)) for (const [i, v] of doc.entries()) out.push(...pathsOf(v, [...at, i]));
  else if (isObj(doc)) for (const [k, v] of Object.entries(doc)) out.push(...pathsOf(v, [...at, k]));
  return out;
}

// Values of the wrong type, out of range, or odd: what a hand-edited file holds.
const oddValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(null, 0, -1, 0.5, 1e308, -0, 2 ** 53, '', ' ', 'all', '-', [], {}, [null], { '': 1 }, true),
  // Names of what every object inherits, as values: a lookup by a value must not find them.
  fc.constantFrom('constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'),
);
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), op: fc.constant('replace' as const), value: oddValue }),
  fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), op: fc.constant('delete' as const) }),
  fc.record({
    at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
    op: fc.constant('add' as const),
    key: fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'constructor', 'a b', 'x"y', '$schema', '0')),
    value: oddValue,
  }),
);

function mutate(doc: unknown, m: Mutation): unknown {
  const root = structuredClone(doc);
  const paths = pathsOf(root);
  const at = paths[Math.floor(m.at * paths.length)]!;
  if (at.length === 0) return m.op === 'replace' ? m.value : root;
  let parent: unknown = root;
  for (const seg of at.slice(0, -1)) parent = (parent as Record<Segment, unknown>)[seg];
  const last = at.at(-1)!;
  const target = (parent as Record<Segment, unknown>)[last];
  if (m.op === 'replace') (parent as Record<Segment, unknown>)[last] = m.value;
  else if (m.op === 'delete') {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete (parent as Record<Segment, unknown>)[last];
  } else if (isObj(target)) Object.defineProperty(target, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
  else if (Array.isArray(target)) target.push(m.value);
  return root;
}

/** A shipped document with one to four mutations. */
const mutated = (docs: readonly unknown[]): fc.Arbitrary<unknown> =>
  fc.tuple(fc.constantFrom(...docs), fc.array(mutation, { minLength: 1, maxLength: 4 })).map(([doc, ms]) => ms.reduce(mutate, doc));

const anyDocument = (docs: readonly unknown[]): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 1, arbitrary: fc.jsonValue() }, { weight: 4, arbitrary: mutated(docs) });

describe('validators on any input (property)', () => {
  it(
    'shipped examples are valid (the mutations start from valid documents)',
    () => {
      for (const p of PLANS) expect(validatePlan(p)).toMatchObject({ ok: true });
      for (const e of EXPERIMENTS) expect(validateExperimentDoc(e)).toMatchObject({ ok: true });
      for (const s of SWEEPS) expect(validateSweep(s)).toMatchObject({ ok: true });
    },
    TIMEOUT_MS,
  );

  it(
    'plans: never a throw, every problem at a path of the input, a validated plan validates again',
    () => {
      fc.assert(
        fc.property(anyDocument(PLANS), (doc) => {
          const before = JSON.stringify(doc);
          const result = validatePlan(doc);
          expect(JSON.stringify(doc)).toBe(before); // never mutates its input
          if (!result.ok) {
            expect(result.problems.length).toBeGreaterThan(0);
            expectPathsIn(doc, result.problems);
          } else expect(validatePlan(result.plan)).toEqual(result);
        }),
        { numRuns: 700 * SOAK },
      );
      expect(checked).toBeGreaterThan(700);
    },
    TIMEOUT_MS,
  );

  it(
    'experiments: never a throw, every problem at a path of the input (the document, then its arms against a plan)',
    () => {
      const plan = (validatePlan(PLANS.find((p) => isObj(p) && p['name'] === 'batch-interference-short')) as { plan: Plan }).plan;
      fc.assert(
        fc.property(anyDocument(EXPERIMENTS), (doc) => {
          const result = validateExperimentDoc(doc);
          if (!result.ok) expectPathsIn(doc, result.problems);
          if (!isObj(doc) || !Array.isArray(doc['arms'])) return;
          const arms = validateArms(doc['arms'], plan, result.ok ? result.experiment.compare : undefined);
          if (!arms.ok) expectPathsIn(doc, arms.problems);
        }),
        { numRuns: 400 * SOAK },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'sweeps: never a throw, every problem at a path of the input',
    () => {
      fc.assert(
        fc.property(anyDocument(SWEEPS), (doc) => {
          const result = validateSweep(doc);
          if (!result.ok) expectPathsIn(doc, result.problems);
        }),
        { numRuns: 700 * SOAK },
      );
    },
    TIMEOUT_MS,
  );
});

describe('plan text on any input (property)', () => {
  it(
    'any text, or a shipped plan cut or with bytes changed, is a plan or a PlanInvalidError, never another throw',
    () => {
      const texts = readdirSync(EXAMPLES)
        .filter((f) => f.endsWith('.plan.json'))
        .map((f) => readFileSync(new URL(f, EXAMPLES), 'utf8'));
      const text = fc.oneof(
        fc.string({ maxLength: 40 }),
        fc.string({
          unit: fc.constantFrom('{', '}', '[', ']', ':', ',', '"', '-', ' ', '\n', 'a', '1', '&', '*', '!', '|', '?', '#'),
          maxLength: 40,
        }),
        fc
          .tuple(
            fc.constantFrom(...texts),
            fc.double({ min: 0, max: 1, noNaN: true }),
            fc.string({ maxLength: 3 }),
            fc.double({ min: 0, max: 1, noNaN: true }),
          )
          .map(([t, at, insert, cut]) => {
            const i = Math.floor(at * t.length);
            return (t.slice(0, i) + insert + t.slice(i + insert.length)).slice(0, Math.max(1, Math.ceil(cut * t.length * 1.01)));
          }),
      );
      fc.assert(
        fc.property(text, fc.constantFrom('plan.json', 'plan.yaml'), (t, name) => {
          try {
            parsePlanText(t, name);
          } catch (err) {
            expect(err, String(err)).toBeInstanceOf(PlanInvalidError);
            expect((err as PlanInvalidError).code).toBe('LF_PLAN_INVALID');
          }
        }),
        { numRuns: 500 * SOAK },
      );
    },
    TIMEOUT_MS,
  );
});

describe('schedule size (property)', () => {
  it(
    'a plan validates only when each class schedules at most MAX_CLASS_ARRIVALS arrivals',
    () => {
      const minimal = PLANS.find((p) => isObj(p) && p['name'] === 'minimal') as Record<string, unknown>;
      fc.assert(
        fc.property(
          fc.double({ min: 1e-3, max: 1e300, noNaN: true }),
          fc.double({ min: 1e-3, max: 86_400, noNaN: true }),
          fc.constantFrom('constant-rate', 'poisson'),
          (rate, duration, model) => {
            const doc = structuredClone(minimal) as { duration_s: number; classes: { load: Record<string, unknown> }[] };
            doc.duration_s = duration;
            doc.classes[0]!.load = {
              model,
              phases: [{ start_s: 0, duration_s: duration, rate_per_s: rate }],
            };
            const result = validatePlan(doc);
            if (rate * duration > MAX_CLASS_ARRIVALS)
              expect(result).toMatchObject({ ok: false, problems: [expect.stringMatching(/^classes\[0\]\.load\.phases: offer about/)] });
            else expect(result, JSON.stringify(result)).toMatchObject({ ok: true });
          },
        ),
        { numRuns: 200 * SOAK },
      );
    },
    TIMEOUT_MS,
  );
});

describe('YAML plans with the types of YAML 1.1 (property)', () => {
  it(
    'a binary, timestamp, set or ordered map anywhere is refused where it is, never read as an object',
    () => {
      const TAGGED = [
        '!!binary aGVsbG8=',
        '2001-12-14',
        '!!timestamp 2001-12-14t21:59:43.10-05:00',
        '!!set { a, b }',
        '!!omap [ a: 1, b: 2 ]',
      ];
      const yamlText = fc
        .tuple(mutated(PLANS), fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), fc.constantFrom(...TAGGED))
        .map(([doc, at, tagged]) => {
          const root = structuredClone(doc);
          const paths = pathsOf(root).filter((p) => p.length > 0);
          if (paths.length === 0) return `%YAML 1.1\n---\n${tagged}\n`;
          const path = paths[Math.floor(at * paths.length)]!;
          let parent: unknown = root;
          for (const seg of path.slice(0, -1)) parent = (parent as Record<Segment, unknown>)[seg];
          (parent as Record<Segment, unknown>)[path.at(-1)!] = 'TAGGED_VALUE_HERE';
          return `%YAML 1.1\n---\n${toYaml(root).replace(/TAGGED_VALUE_HERE/, tagged)}`;
        });
      fc.assert(
        fc.property(yamlText, (text) => {
          try {
            parsePlanText(text, 'plan.yaml');
          } catch (err) {
            expect(err, String(err)).toBeInstanceOf(PlanInvalidError);
            expectPathsIn(parseYaml(text), (err as PlanInvalidError).details as string[]);
          }
        }),
        { numRuns: 300 * SOAK },
      );
    },
    TIMEOUT_MS,
  );
});
