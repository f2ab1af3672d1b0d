// Checks a document against a file format's TypeBox definition and says what is wrong in the
// house form (`classes[0].prompt.input_tokens: must be >= 1`), every problem at once. The library
// finds the problems; this file only words them: one problem per path, and an alternative
// (a pattern kind, a distribution, a strategy) is picked by its tag so that only its own fields
// are talked about.
import type { SchemaOptions, Static, TLiteral, TObject, TProperties, TSchema, TUnion } from '@sinclair/typebox';
import { Kind, Type } from '@sinclair/typebox';
import { ValueErrorType as E, Value, type ValueError } from '@sinclair/typebox/value';
import type { Ctx, Problem, Segment } from './validate-kit.js';
import { isObj, pathOf, quoted, suggestion } from './validate-kit.js';

// Under a symbol, so the wording never reaches the published JSON Schema.
const SAY = Symbol('loadfleet.say');

/** Words a definition uses instead of the generic ones. */
export interface Wording {
  /** The value has the wrong type, or fits none of the alternatives. */
  type?: string;
  /** An empty string or list. */
  empty?: string;
  /** A string that does not match `pattern`, or a number that is not a multiple of `multipleOf`. */
  pattern?: string;
  /** Said for these keys instead of "unknown key". */
  unknown?: Record<string, string>;
}

/** The schema, with the words its problems are told in. */
export function say<T extends TSchema>(schema: T, wording: Wording): T {
  return { ...schema, [SAY]: wording };
}

/** One of a list of strings (an `enum`), refused as `must be one of "a", "b"`. */
export function oneOf<const T extends string[]>(values: [...T], options?: SchemaOptions): TUnion<{ [K in keyof T]: TLiteral<T[K]> }> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as never;
}

/** An object that refuses unknown keys: typos must not pass silently. */
export function closed<T extends TProperties>(properties: T, options?: SchemaOptions): TObject<T> {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

/** Adds the shape problems of `value` (checked against `schema`) to `ctx`, one per path. */
export function checkShape(ctx: Ctx, schema: TSchema, value: unknown): void {
  const seen = new Set<string>();
  for (const p of explainAll(Value.Errors(schema, value), value)) {
    const at = [...ctx.at, ...p.at];
    if (seen.has(pathOf(at))) continue;
    seen.add(pathOf(at));
    ctx.problems.push({ at, message: p.message });
  }
}

function* explainAll(errors: Iterable<ValueError>, root: unknown): Generator<Problem> {
  for (const e of errors) {
    const at = segments(e.path, root);
    if (e.type === E.Union) yield* explainUnion(e, at, root);
    else yield { at, message: wordFor(e, at) };
  }
}

// A JSON pointer as path segments; a number is an index only where the document has an array.
function segments(pointer: string, root: unknown): Segment[] {
  const at: Segment[] = [];
  let node = root;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const index = Array.isArray(node) && /^\d+$/.test(key) ? Number(key) : undefined;
    at.push(index ?? key);
    node = index !== undefined ? (node as unknown[])[index] : isObj(node) ? node[key] : undefined;
  }
  return at;
}

// The value fits none of the alternatives: say what the tags allow, or explain the one alternative
// of the value's type (for objects, the one its tag names).
function* explainUnion(e: ValueError, at: Segment[], root: unknown): Generator<Problem> {
  const variants = e.schema['anyOf'] as TSchema[];
  if (variants.every((v) => v[Kind] === 'Literal')) return yield { at, message: mustBe(variants.map((v) => v['const'])) };
  const fitting = variants.flatMap((v, i) => (fits(v, e.value) ? [i] : []));
  const tag = fitting.length > 1 ? tagKey(fitting.map((i) => variants[i]!)) : undefined;
  if (tag !== undefined && isObj(e.value)) {
    const tags = fitting.map((i) => variants[i]!['properties'][tag]['const'] as string);
    const chosen = tags.indexOf(e.value[tag] as string);
    if (chosen < 0) return yield { at: [...at, tag], message: e.value[tag] === undefined ? 'is required' : mustBe(tags) };
    return yield* explainAll(e.errors[fitting[chosen]!]!, root);
  }
  if (fitting.length === 1) return yield* explainAll(e.errors[fitting[0]!]!, root);
  yield { at, message: wordingOf(e.schema).type ?? `must be ${[...new Set(variants.map(typeName))].join(' or ')}` };
}

function fits(schema: TSchema, v: unknown): boolean {
  const kind = schema[Kind];
  if (kind === 'Number' || kind === 'Integer') return typeof v === 'number';
  if (kind === 'Object') return isObj(v);
  if (kind === 'Array' || kind === 'Tuple') return Array.isArray(v);
  return kind === 'String' ? typeof v === 'string' : kind === 'Boolean' ? typeof v === 'boolean' : false;
}

// The key whose value names the alternative (`pattern`, `distribution`, `type`): a literal in each.
function tagKey(objects: readonly TSchema[]): string | undefined {
  const keys = Object.keys(objects[0]!['properties'] ?? {});
  return keys.find((k) => objects.every((o) => o['properties']?.[k]?.[Kind] === 'Literal'));
}

function typeName(schema: TSchema): string {
  const kind = schema[Kind];
  return kind === 'Integer' ? 'an integer' : kind === 'Object' || kind === 'Array' ? `an ${kind.toLowerCase()}` : `a ${kind.toLowerCase()}`;
}

function mustBe(values: readonly string[]): string {
  return values.length === 1 ? `must be ${quoted(values)}` : `must be one of ${quoted(values)}`;
}

function wordingOf(schema: TSchema): Wording {
  return (schema as { [SAY]?: Wording })[SAY] ?? {};
}

function wordFor(e: ValueError, at: readonly Segment[]): string {
  const s = e.schema;
  const say = wordingOf(s);
  switch (e.type) {
    case E.ObjectRequiredProperty:
      return 'is required';
    case E.ObjectAdditionalProperties: {
      const key = String(at.at(-1));
      // Own words only: a key such as `toString` must not read what every object inherits.
      const words = say.unknown && Object.hasOwn(say.unknown, key) ? say.unknown[key] : undefined;
      return words ?? `unknown key${suggestion(key, Object.keys(s['properties'] ?? {}))}`;
    }
    case E.Object:
      return say.type ?? 'must be an object';
    case E.Array:
    case E.Tuple:
    case E.TupleLength:
      return say.type ?? 'must be an array';
    case E.ArrayMinItems:
      return say.empty ?? 'must not be empty';
    case E.Number:
    case E.Integer:
      if (typeof e.value !== 'number') return say.type ?? 'must be a number';
      return Number.isFinite(e.value) ? 'must be an integer' : 'must be a finite number';
    case E.NumberMinimum:
    case E.IntegerMinimum:
      return `must be >= ${s['minimum']}`;
    case E.NumberExclusiveMinimum:
    case E.IntegerExclusiveMinimum:
      return `must be > ${s['exclusiveMinimum']}`;
    case E.NumberMaximum:
    case E.IntegerMaximum:
      return s['maximum'] === Number.MAX_SAFE_INTEGER ? 'must be a safe integer' : `must be <= ${s['maximum']}`;
    case E.NumberMultipleOf:
    case E.IntegerMultipleOf:
      return say.pattern ?? `must be a multiple of ${s['multipleOf']}`;
    case E.String:
      return say.type ?? 'must be a string';
    case E.StringMinLength:
      return say.empty ?? 'must not be empty';
    case E.StringMaxLength:
      return `must be at most ${s['maxLength']} characters`;
    case E.StringPattern:
      return say.pattern ?? `must match /${s['pattern']}/`;
    case E.Boolean:
      return 'must be a boolean';
    case E.Literal:
      return mustBe([s['const']]);
    default:
      return e.message;
  }
}

/**
 * The root of a file format: its fields, plus `$schema`, which editors read to find the published
 * JSON Schema (examples carry `"$schema": "./schemas/<name>.schema.json"`) and loadfleet ignores.
 */
export function fileRoot<T extends TProperties>(properties: T, options: SchemaOptions) {
  const $schema = Type.Optional(Type.String({ description: 'The JSON Schema of this file, for editors; ignored by loadfleet.' }));
  return closed({ $schema, ...properties }, options);
}

/** True when `value` has the shape `schema` defines, so a rule may rely on it. */
export function fitsShape<T extends TSchema>(schema: T, value: unknown): value is Static<T> {
  return Value.Check(schema, value);
}
