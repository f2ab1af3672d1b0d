// Validation of the real-workload plan fields (issue 14): length distributions, `prompt.dataset`
// and `load.trace`. Kept apart from plan-validate.ts, which calls these; the same conventions:
// every problem as `<json path>: <what is wrong>`, unknown keys refused.
import type { DatasetSpec, LengthDistribution, SessionSpec, TraceSpec, TrafficClass } from './plan.js';
import type { Ctx, NumRule, Obj } from './validate-kit.js';
import { bool, checkNum, child, isObj, keysOf, knownKeys, num, oneOf, report, str } from './validate-kit.js';
import { TRACE_DEFAULTS } from './workload-files.js';

const TOKENS: NumRule = { integer: true, min: 1 };
const OPTIONAL_TOKENS: NumRule = { ...TOKENS, optional: true };

/**
 * A token count: a positive integer or a distribution object. Returns the smallest length it can
 * give (for checks against it), or undefined when absent or invalid.
 */
export function checkLength(ctx: Ctx, o: Obj, key: string, presence: 'required' | 'forbidden'): number | undefined {
  const v = o[key];
  const c = child(ctx, key);
  if (presence === 'forbidden') {
    if (v !== undefined) report(c, 'not allowed here (the trace, dataset or session gives it)');
    return undefined;
  }
  if (v === undefined) return void report(c, 'is required');
  if (typeof v === 'number') return checkNum(c, v, TOKENS);
  if (!isObj(v)) return void report(c, 'must be a positive integer or a distribution object');
  const kind = oneOf(c, v, 'distribution', ['uniform', 'normal', 'lognormal', 'histogram']);
  return kind ? DISTRIBUTION_CHECKS[kind](c, v) : undefined;
}

type Kind = LengthDistribution['distribution'];
const DISTRIBUTION_CHECKS: Record<Kind, (ctx: Ctx, o: Obj) => number | undefined> = {
  uniform(ctx, o) {
    knownKeys(ctx, o, ['distribution', 'min', 'max']);
    const min = num(ctx, o, 'min', TOKENS);
    const max = num(ctx, o, 'max', TOKENS);
    if (min !== undefined && max !== undefined && max < min) report(child(ctx, 'max'), `must be >= min (${min})`);
    return min;
  },
  normal(ctx, o) {
    knownKeys(ctx, o, ['distribution', 'mean', 'stddev', 'min', 'max']);
    num(ctx, o, 'mean', { exclusiveMin: 0 });
    num(ctx, o, 'stddev', { min: 0 });
    return clamps(ctx, o);
  },
  lognormal(ctx, o) {
    knownKeys(ctx, o, ['distribution', 'mu', 'sigma', 'min', 'max']);
    // exp(mu) is the median; above e^40 tokens it is certainly a unit mistake.
    num(ctx, o, 'mu', { min: -40, max: 40 });
    num(ctx, o, 'sigma', { min: 0, max: 10 });
    return clamps(ctx, o);
  },
  histogram(ctx, o) {
    knownKeys(ctx, o, ['distribution', 'buckets']);
    const b = o['buckets'];
    const c = child(ctx, 'buckets');
    if (!Array.isArray(b) || b.length === 0) return void report(c, 'must be a non-empty array of [tokens, weight] pairs');
    let lo: number | undefined;
    for (const [i, pair] of b.entries()) {
      const p = child(c, i);
      if (!Array.isArray(pair) || pair.length !== 2) {
        report(p, 'must be a [tokens, weight] pair');
        continue;
      }
      const tokens = checkNum(child(p, 0), pair[0], TOKENS);
      checkNum(child(p, 1), pair[1], { exclusiveMin: 0 });
      if (tokens !== undefined) lo = Math.min(lo ?? tokens, tokens);
    }
    return lo;
  },
};

// The optional clamps of normal and lognormal draws; min defaults to 1 (a prompt has a token).
function clamps(ctx: Ctx, o: Obj): number | undefined {
  const min = num(ctx, o, 'min', OPTIONAL_TOKENS);
  const max = num(ctx, o, 'max', OPTIONAL_TOKENS);
  if (min !== undefined && max !== undefined && max < min) report(child(ctx, 'max'), `must be >= min (${min})`);
  return min ?? 1;
}

/** The keys `load.trace` may have. */
export const TRACE_KEYS = keysOf<TraceSpec>({ file: true, format: true, time_scale: true, start_s: true, limit: true, block_tokens: true });

/** `load.trace`; the file itself is read and checked when the plan is loaded (workload-files.ts). */
export function checkTrace(ctx: Ctx, o: Obj): true {
  knownKeys(ctx, o, TRACE_KEYS);
  str(ctx, o, 'file');
  oneOf(ctx, o, 'format', ['mooncake', 'azure', 'burstgpt']);
  num(ctx, o, 'time_scale', { exclusiveMin: 0, optional: true });
  num(ctx, o, 'start_s', { min: 0, optional: true });
  num(ctx, o, 'limit', OPTIONAL_TOKENS);
  // engine-sim and vLLM cache 16-token blocks: a trace block that is not a multiple of 16 could not
  // be cached exactly as the trace's hash ids say.
  const block = num(ctx, o, 'block_tokens', OPTIONAL_TOKENS);
  if (block !== undefined && block % 16 !== 0) report(child(ctx, 'block_tokens'), 'must be a multiple of 16 (the KV cache block size)');
  return true;
}

/** The keys `prompt.dataset` may have. */
export const DATASET_KEYS = keysOf<DatasetSpec>({
  file: true,
  format: true,
  replacement: true,
  min_input_tokens: true,
  max_input_tokens: true,
});

/** `prompt.dataset`. */
export function checkDataset(ctx: Ctx, o: Obj): true {
  knownKeys(ctx, o, DATASET_KEYS);
  str(ctx, o, 'file');
  oneOf(ctx, o, 'format', ['jsonl', 'sharegpt']);
  bool(ctx, o, 'replacement', true);
  const min = num(ctx, o, 'min_input_tokens', OPTIONAL_TOKENS);
  const max = num(ctx, o, 'max_input_tokens', OPTIONAL_TOKENS);
  if (min !== undefined && max !== undefined && max < min) report(child(ctx, 'max_input_tokens'), `must be >= min_input_tokens (${min})`);
  return true;
}

/** The keys `load.session` may have. */
export const SESSION_KEYS = keysOf<SessionSpec>({ turns: true, think_time_s: true, user_tokens: true });

/** `load.session`: turns and user_tokens are token-count specs; think_time_s seconds, fixed or uniform. */
export function checkSession(ctx: Ctx, o: Obj): true {
  knownKeys(ctx, o, SESSION_KEYS);
  checkLength(ctx, o, 'turns', 'required');
  checkLength(ctx, o, 'user_tokens', 'required');
  const think = o['think_time_s'];
  const c = child(ctx, 'think_time_s');
  if (think === undefined) report(c, 'is required');
  else if (typeof think === 'number') checkNum(c, think, { min: 0, max: 3600 });
  else if (!isObj(think)) report(c, 'must be a number of seconds or {"distribution": "uniform", "min", "max"}');
  else {
    knownKeys(c, think, ['distribution', 'min', 'max']);
    oneOf(c, think, 'distribution', ['uniform']);
    const min = num(c, think, 'min', { min: 0, max: 3600 });
    const max = num(c, think, 'max', { min: 0, max: 3600 });
    if (min !== undefined && max !== undefined && max < min) report(child(c, 'max'), `must be >= min (${min})`);
  }
  return true;
}

/** Fills the trace defaults and gives a trace class its (empty) phases, so code reading phases needs no special case. */
export function workloadDefaults(cls: TrafficClass): TrafficClass {
  if (cls.load.model === 'sessions') {
    // Sessions share their own history by design: the default cache "unique" does not apply.
    const { cache: _unique, ...prompt } = cls.prompt;
    return { ...cls, prompt };
  }
  if (cls.load.model !== 'trace' || !cls.load.trace) return cls;
  // The default cache "unique" does not apply: a trace shares exactly what its hash ids say.
  const { cache: _unique, ...prompt } = cls.prompt;
  return { ...cls, prompt, load: { ...cls.load, phases: cls.load.phases ?? [], trace: { ...TRACE_DEFAULTS, ...cls.load.trace } } };
}
