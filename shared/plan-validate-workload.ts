// The rules of the real-workload plan fields that a schema cannot say: which prompt
// fields a trace, dataset or session class may have, and ranges whose max must not be below their
// min. Called by plan-validate.ts; their shapes are in plan-schema.ts.
import type { Static } from '@sinclair/typebox';
import type { LoadModelName, TrafficClass } from './plan.js';
import { TRACE_DEFAULTS } from './plan.js';
import type { TrafficClass as ClassDef } from './plan-schema.js';
import { DatasetSpec, PromptSpec, SessionSpec } from './plan-schema.js';
import { fitsShape } from './schema-problems.js';
import type { Ctx, Obj } from './validate-kit.js';
import { child, isObj, report } from './validate-kit.js';

const LENGTH = PromptSpec.properties.input_tokens;

/** `prompt`, against the class's load model (undefined when the model itself is wrong); an API that `generates` no tokens has no output_tokens (plan-validate-api.ts says so). */
export function promptRules(ctx: Ctx, o: Obj, model: LoadModelName | undefined, generates = true): void {
  const trace = model === 'trace';
  const sessions = model === 'sessions';
  const dataset = o['dataset'] !== undefined;
  const refuse = (key: string, why: string) => o[key] !== undefined && report(child(ctx, key), why);
  if (trace) refuse('dataset', 'not allowed with model "trace" (the trace gives each prompt)');
  if (trace) refuse('cache', 'not allowed with model "trace" (its hash ids say what is shared)');
  if (sessions) refuse('cache', 'not allowed with model "sessions" (each turn re-sends its history)');
  if (sessions) refuse('dataset', 'not allowed with model "sessions" (load.session shapes each turn)');
  // A trace row gives both lengths; a dataset record gives the prompt (output_tokens is the fallback);
  // a session's prompt is its conversation so far (load.session.user_tokens sizes each new message).
  lengthRules(ctx, o, 'input_tokens', !(trace || dataset || sessions));
  if (generates) lengthRules(ctx, o, 'output_tokens', !trace);
  if (isObj(o['dataset']) && fitsShape(DatasetSpec, o['dataset'])) {
    const { min_input_tokens: min, max_input_tokens: max } = o['dataset'];
    if (min !== undefined && max !== undefined && max < min)
      report(child(child(ctx, 'dataset'), 'max_input_tokens'), `must be >= min_input_tokens (${min})`);
  }
  if (trace || dataset || sessions)
    refuse('shared_prefix_tokens', 'not allowed with a trace or dataset (their content decides what is shared)');
  else sharedPrefixRules(ctx, o);
  // Canaries ride on the calibrated prompt of a class of identical requests; a class whose requests
  // each have their own prompt carries none, so the flag would silently do nothing.
  if (o['canary'] === true) {
    const perRequest = trace
      ? 'model "trace" (each row gives its own prompt)'
      : sessions
        ? 'model "sessions" (each turn\'s prompt is its conversation so far)'
        : dataset
          ? 'a dataset (each record gives its own prompt)'
          : isObj(o['input_tokens']) || isObj(o['output_tokens'])
            ? 'a length distribution (each request has its own length, so no calibrated prompt)'
            : null;
    if (perRequest !== null)
      report(child(ctx, 'canary'), `not allowed with ${perRequest}: canaries need a calibrated class of identical requests`);
  }
}

// Required exactly when cache is "shared": with unique prompts a prefix length would be silently ignored.
function sharedPrefixRules(ctx: Ctx, o: Obj): void {
  const cache = o['cache'];
  if (cache !== undefined && cache !== 'unique' && cache !== 'shared') return;
  const c = child(ctx, 'shared_prefix_tokens');
  const prefix = o['shared_prefix_tokens'];
  if (cache !== 'shared' && prefix !== undefined) report(c, 'only allowed when cache is "shared"');
  if (cache === 'shared' && prefix === undefined) report(c, 'is required when cache is "shared"');
  const smallest = smallestLength(o['input_tokens']);
  if (cache === 'shared' && typeof prefix === 'number' && smallest !== undefined && prefix >= smallest)
    report(c, `must be < input_tokens (${smallest})`);
}

// A token count is required where nothing else gives it, and refused where something does.
function lengthRules(ctx: Ctx, o: Obj, key: string, required: boolean): void {
  const c = child(ctx, key);
  if (!required && o[key] !== undefined) report(c, 'not allowed here (the trace, dataset or session gives it)');
  else if (required && o[key] === undefined) report(c, 'is required');
  else if (fitsShape(LENGTH, o[key])) maxNotBelowMin(c, o[key]);
}

// The smallest length a valid token count can give (for checks against it).
function smallestLength(v: unknown): number | undefined {
  if (!fitsShape(LENGTH, v)) return undefined;
  if (typeof v === 'number') return v;
  if (v.distribution === 'histogram') return Math.min(...v.buckets.map(([tokens]) => tokens));
  return v.min ?? 1;
}

function maxNotBelowMin(ctx: Ctx, v: unknown): void {
  if (isObj(v) && typeof v['min'] === 'number' && typeof v['max'] === 'number' && v['max'] < v['min'])
    report(child(ctx, 'max'), `must be >= min (${v['min']})`);
}

/** `load.session`: each range's max not below its min. */
export function sessionRules(ctx: Ctx, o: Obj): void {
  for (const key of ['turns', 'user_tokens', 'think_time_s'] as const) {
    if (fitsShape(SessionSpec.properties[key], o[key])) maxNotBelowMin(child(ctx, key), o[key]);
  }
}

/** Fills the trace defaults and gives every class its phases (a trace's are empty), so code reading phases needs no special case. */
export function workloadDefaults(cls: Static<typeof ClassDef>): TrafficClass {
  const { phases = [], ...load } = cls.load;
  if (cls.load.model === 'sessions' || cls.load.model === 'trace') {
    // Sessions share their own history and a trace exactly what its hash ids say: the default cache "unique" does not apply.
    const { cache: _unique, ...prompt } = cls.prompt;
    const trace = load.trace && { trace: { ...TRACE_DEFAULTS, ...load.trace } };
    return { ...cls, prompt, load: { ...load, phases, ...trace } };
  }
  return { ...cls, load: { ...load, phases } };
}
