// Validation of `loadfleet.plan/v1` (../spec/plan.md). Plans are written by hand, so every problem
// is collected in one pass as `<json path>: <what is wrong>` instead of stopping at the first one.
// The shape: the toolkit of field checks (validate-kit.ts), then one small function per object kind
// whose lines read as the list of rules.
import type {
  ConstantPattern,
  Load,
  LoadModelName,
  NoisySinusoidalPattern,
  Pattern,
  Phase,
  Plan,
  PromptSpec,
  RampPattern,
  ScrapeTarget,
  Slo,
  Target,
  TrafficClass,
  Window,
} from './plan.js';
import { PLAN_DEFAULTS, PLAN_SCHEMA } from './plan.js';
import { checkDataset, checkLength, checkSession, checkTrace, workloadDefaults } from './plan-validate-workload.js';
import type { Ctx, NumRule, Obj, StrRule } from './validate-kit.js';
import {
  bool,
  checkNum,
  child,
  isObj,
  keysOf,
  knownKeys,
  list,
  noDuplicates,
  num,
  obj,
  oneOf,
  quoted,
  report,
  str,
} from './validate-kit.js';

/** Outcome of validation: the plan with defaults filled in, or every problem found. */
export type PlanValidation = { ok: true; plan: Plan } | { ok: false; problems: string[] };

/** Validates an already-parsed plan document; never mutates `input`. */
export function validatePlan(input: unknown): PlanValidation {
  if (!isObj(input)) return { ok: false, problems: ['$: must be an object'] };
  const ctx: Ctx = { path: '', problems: [] };
  checkPlan(ctx, input);
  if (ctx.problems.length > 0) return { ok: false, problems: ctx.problems };
  // Validation has proved the shape, so the clone is a plan apart from the defaulted fields.
  return { ok: true, plan: withDefaults(structuredClone(input) as PlanInput) };
}

// ---- defaults

/** What validation proves: a Plan, except that `target.timeout_s` may still be absent. */
type PlanInput = Omit<Plan, 'target'> & { target?: Omit<Target, 'timeout_s'> & { timeout_s?: number } };

// Not in PLAN_DEFAULTS (plan.ts): the studies always send fixed-length, cache-defeating prompts.
const PROMPT_DEFAULTS = { ignore_eos: true, cache: 'unique' } as const satisfies Partial<PromptSpec>;

function withDefaults(plan: PlanInput): Plan {
  const { target, ...rest } = plan;
  return {
    ...rest,
    drain_timeout_s: plan.drain_timeout_s ?? PLAN_DEFAULTS.drain_timeout_s,
    max_error_share: plan.max_error_share ?? PLAN_DEFAULTS.max_error_share,
    ...(target && { target: { ...target, timeout_s: target.timeout_s ?? PLAN_DEFAULTS.timeout_s } }),
    classes: plan.classes.map((cls) => workloadDefaults({ ...cls, prompt: { ...PROMPT_DEFAULTS, ...cls.prompt } })),
  };
}

// ---- toolkit

// `inputs` is filled by the coordinator from the files a plan names; a plan file never carries it.
const PLAN_KEYS = keysOf<Omit<Plan, 'inputs'>>({
  schema: true,
  name: true,
  seed: true,
  duration_s: true,
  drain_timeout_s: true,
  max_error_share: true,
  target: true,
  classes: true,
  windows: true,
  scrape: true,
  prompt_calibration: true,
});
const TARGET_KEYS = keysOf<Target>({
  base_url: true,
  api: true,
  model: true,
  api_key_env: true,
  timeout_s: true,
  headers: true,
  require_usage: true,
  tokenizer: true,
});
const CLASS_KEYS = keysOf<TrafficClass>({ name: true, priority: true, headers: true, prompt: true, load: true, slo: true });
const PROMPT_KEYS = keysOf<PromptSpec>({
  input_tokens: true,
  output_tokens: true,
  ignore_eos: true,
  cache: true,
  shared_prefix_tokens: true,
  canary: true,
  dataset: true,
});
const LOAD_KEYS = keysOf<Load>({ model: true, phases: true, trace: true, session: true });
const PHASE_KEYS = keysOf<Phase>({ start_s: true, duration_s: true, rate_per_s: true, rate: true, concurrency: true });
const SLO_KEYS = keysOf<Slo>({ ttft_p95_ms: true, tpot_p95_ms: true, e2e_p95_ms: true, success_rate_min: true, basis: true });
const WINDOW_KEYS = keysOf<Window>({ name: true, start_s: true, end_s: true });
const SCRAPE_KEYS = keysOf<ScrapeTarget>({ name: true, url: true, interval_s: true });

// One day: longer runs are almost certainly a unit mistake (ms for s).
const MAX_DURATION_S = 86_400;
const NAME_RULE = { pattern: /^[A-Za-z0-9._-]+$/, hint: 'must use only letters, digits, ".", "_" and "-"' };
// Class, window and scrape names end up inside metric names and file names, hence the short limit.
const SHORT_NAME: StrRule = { ...NAME_RULE, maxLength: 64 };
const ENV_NAME: StrRule = {
  optional: true,
  pattern: /^[A-Za-z_][A-Za-z0-9_]*$/,
  hint: 'must be an environment variable name (letters, digits and "_", not starting with a digit)',
};
const TOKENS: NumRule = { integer: true, min: 1 };
const SHARE: NumRule = { min: 0, max: 1, optional: true };
const OPTIONAL_MS: NumRule = { exclusiveMin: 0, optional: true };
/** The window name that always means the whole run. */
const ALL_WINDOW = 'all';

function checkPlan(ctx: Ctx, o: Obj): void {
  knownKeys(ctx, o, PLAN_KEYS);
  oneOf(ctx, o, 'schema', [PLAN_SCHEMA]);
  str(ctx, o, 'name', { ...NAME_RULE, maxLength: 128 });
  num(ctx, o, 'seed', { integer: true, min: 0 });
  const durationS = num(ctx, o, 'duration_s', { exclusiveMin: 0, max: MAX_DURATION_S });
  num(ctx, o, 'drain_timeout_s', { min: 0, optional: true });
  num(ctx, o, 'max_error_share', SHARE);
  obj(ctx, o, 'target', checkTarget, true);
  const classNames = list(ctx, o, 'classes', (c, cls) => checkClass(c, cls, durationS), { nonEmpty: true });
  const windowNames = list(ctx, o, 'windows', (c, w) => checkWindow(c, w, durationS), { optional: true });
  const scrapeNames = list(ctx, o, 'scrape', checkScrape, { optional: true });
  // The coordinator sizes prompts against the target itself; a plan that carries sizes would skip that.
  if (o['prompt_calibration'] !== undefined) report(child(ctx, 'prompt_calibration'), 'is written by the coordinator, not in a plan');
  noDuplicates(child(ctx, 'classes'), classNames);
  noDuplicates(child(ctx, 'windows'), windowNames);
  noDuplicates(child(ctx, 'scrape'), scrapeNames);
}

function checkTarget(ctx: Ctx, o: Obj): void {
  knownKeys(ctx, o, TARGET_KEYS);
  httpUrl(ctx, o, 'base_url');
  oneOf(ctx, o, 'api', ['chat', 'completions']);
  str(ctx, o, 'model');
  str(ctx, o, 'api_key_env', ENV_NAME);
  num(ctx, o, 'timeout_s', { exclusiveMin: 0, optional: true });
  obj(ctx, o, 'headers', checkHeaders, true);
  bool(ctx, o, 'require_usage', true);
  str(ctx, o, 'tokenizer', { optional: true, pattern: /\S/, hint: 'must be the path of a tokenizer.json' });
}

function httpUrl(ctx: Ctx, o: Obj, key: string): void {
  const v = str(ctx, o, key);
  if (v === undefined) return;
  const url = URL.canParse(v) ? new URL(v) : undefined;
  const c = child(ctx, key);
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    report(c, 'must be an http(s) URL');
  } else if (url.username !== '' || url.password !== '') {
    // Plans live in git; a password in a URL would be a secret in the repository.
    report(c, 'must not contain credentials');
  }
}

// RFC 7230 `token`: what undici accepts as a header name.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

// Header maps are free-form (string → string), so only names and values are checked.
function checkHeaders(ctx: Ctx, o: Obj): void {
  const firstSpelling = new Map<string, string>(); // lower-case name → the spelling seen first
  for (const [name, value] of Object.entries(o)) {
    const c = child(ctx, name);
    const nameProblem = headerNameProblem(name, firstSpelling);
    if (nameProblem) report(c, nameProblem);
    if (typeof value !== 'string') report(c, 'must be a string');
    // CR/LF would let a value inject further headers; NUL is refused by every HTTP stack.
    else if (/[\r\n\0]/.test(value)) report(c, 'must not contain CR, LF or NUL');
  }
}

function headerNameProblem(name: string, firstSpelling: Map<string, string>): string | undefined {
  const lower = name.toLowerCase();
  if (!HEADER_NAME.test(name)) return 'must be a valid HTTP header name';
  // The key is read from target.api_key_env on each agent; it must never be written into a plan.
  if (lower === 'authorization') return 'must not be set in a plan (the key is read from target.api_key_env)';
  const first = firstSpelling.get(lower);
  if (first !== undefined) return `same header as ${JSON.stringify(first)} (names are case-insensitive)`;
  firstSpelling.set(lower, name);
  return undefined;
}

function checkClass(ctx: Ctx, o: Obj, durationS: number | undefined): string | undefined {
  knownKeys(ctx, o, CLASS_KEYS);
  const name = str(ctx, o, 'name', SHORT_NAME);
  num(ctx, o, 'priority', { integer: true, optional: true });
  obj(ctx, o, 'headers', checkHeaders, true);
  const load = isObj(o['load']) ? o['load'] : {};
  obj(ctx, o, 'prompt', (c, prompt) => checkPrompt(c, prompt, load['model'] === 'trace', load['model'] === 'sessions'));
  obj(ctx, o, 'load', (c, l) => checkLoad(c, l, durationS));
  obj(ctx, o, 'slo', checkSlo, true);
  // A closed loop has no intended send time, so nothing to measure TTFT from but the send.
  const closed = isObj(o.load) && o.load.model === 'concurrency';
  if (closed && isObj(o.slo) && o.slo.basis === 'intended')
    report(child(child(ctx, 'slo'), 'basis'), '"intended" needs an open-loop class (a closed loop has no intended send time)');
  return name;
}

function checkPrompt(ctx: Ctx, o: Obj, trace: boolean, sessions = false): void {
  knownKeys(ctx, o, PROMPT_KEYS);
  // A trace row gives both lengths; a dataset record gives the prompt (output_tokens is the fallback).
  const dataset = obj(ctx, o, 'dataset', checkDataset, true) !== undefined || o['dataset'] !== undefined;
  if (trace && o['dataset'] !== undefined) report(child(ctx, 'dataset'), 'not allowed with model "trace" (the trace gives each prompt)');
  if (trace && o['cache'] !== undefined) report(child(ctx, 'cache'), 'not allowed with model "trace" (its hash ids say what is shared)');
  if (sessions && o['cache'] !== undefined)
    report(child(ctx, 'cache'), 'not allowed with model "sessions" (each turn re-sends its history)');
  if (sessions && o['dataset'] !== undefined)
    report(child(ctx, 'dataset'), 'not allowed with model "sessions" (load.session shapes each turn)');
  // A session's prompt is its conversation so far: load.session.user_tokens sizes each new message.
  const inputTokens = checkLength(ctx, o, 'input_tokens', trace || dataset || sessions ? 'forbidden' : 'required');
  checkLength(ctx, o, 'output_tokens', trace ? 'forbidden' : 'required');
  bool(ctx, o, 'ignore_eos', true);
  bool(ctx, o, 'canary', true);
  const cache = oneOf(ctx, o, 'cache', ['unique', 'shared'], true);
  if (trace || dataset || sessions) {
    if (o['shared_prefix_tokens'] !== undefined)
      report(child(ctx, 'shared_prefix_tokens'), 'not allowed with a trace or dataset (their content decides what is shared)');
  } else if (cache !== undefined || o['cache'] === undefined) checkSharedPrefix(ctx, o, cache === 'shared', inputTokens);
}

// Required exactly when cache is "shared": with unique prompts a prefix length would be silently ignored.
function checkSharedPrefix(ctx: Ctx, o: Obj, shared: boolean, inputTokens: number | undefined): void {
  const c = child(ctx, 'shared_prefix_tokens');
  const present = o['shared_prefix_tokens'] !== undefined;
  if (!shared && present) report(c, 'only allowed when cache is "shared"');
  if (shared && !present) report(c, 'is required when cache is "shared"');
  if (!shared || !present) return;
  const prefix = num(ctx, o, 'shared_prefix_tokens', TOKENS);
  if (prefix !== undefined && inputTokens !== undefined && prefix >= inputTokens) report(c, `must be < input_tokens (${inputTokens})`);
}

type LoadKey = Exclude<keyof Phase, 'start_s' | 'duration_s'>;
const ALL_LOAD_KEYS: readonly LoadKey[] = ['rate_per_s', 'rate', 'concurrency'];
/** Which phase field each load model reads; also the list of known models. */
const MODEL_LOAD_KEYS: Record<LoadModelName, readonly LoadKey[]> = {
  'constant-rate': ['rate_per_s'],
  poisson: ['rate_per_s', 'rate'],
  concurrency: ['concurrency'],
  trace: [],
  sessions: ['rate_per_s', 'rate'],
};
const LOAD_VALUE_CHECKS: Record<LoadKey, (ctx: Ctx, v: unknown) => void> = {
  rate_per_s: (ctx, v) => checkNum(ctx, v, { exclusiveMin: 0 }),
  rate: checkRate,
  concurrency: checkConcurrency,
};

interface Span {
  startS: number;
  endS: number;
}

function checkLoad(ctx: Ctx, o: Obj, durationS: number | undefined): void {
  knownKeys(ctx, o, LOAD_KEYS);
  const model = oneOf(ctx, o, 'model', Object.keys(MODEL_LOAD_KEYS) as LoadModelName[]);
  // A trace's rows are its arrivals: it has no phases, and only it has a `trace`.
  if (model === 'trace') {
    obj(ctx, o, 'trace', checkTrace);
    // An empty list is what validation itself fills in, so a validated plan validates again.
    const phases = o['phases'];
    if (phases !== undefined && !(Array.isArray(phases) && phases.length === 0))
      report(child(ctx, 'phases'), 'not allowed with model "trace" (the rows are the arrivals)');
    return;
  }
  if (o['trace'] !== undefined && model !== undefined) report(child(ctx, 'trace'), 'only allowed with model "trace"');
  if (model === 'sessions') obj(ctx, o, 'session', checkSession);
  else if (o['session'] !== undefined && model !== undefined) report(child(ctx, 'session'), 'only allowed with model "sessions"');
  const spans = list(ctx, o, 'phases', (c, phase) => checkPhase(c, phase, model, durationS), { nonEmpty: true });
  if (spans) noOverlap(child(ctx, 'phases'), spans);
}

function checkPhase(ctx: Ctx, o: Obj, model: LoadModelName | undefined, durationS: number | undefined): Span | undefined {
  knownKeys(ctx, o, PHASE_KEYS);
  const startS = num(ctx, o, 'start_s', { min: 0 });
  const lengthS = num(ctx, o, 'duration_s', { exclusiveMin: 0 });
  checkPhaseLoad(ctx, o, model);
  if (startS === undefined || lengthS === undefined) return undefined;
  const endS = startS + lengthS;
  if (durationS !== undefined && endS > durationS) report(ctx, `ends at ${endS} s, after duration_s (${durationS})`);
  return { startS, endS };
}

// Exactly one load field, and one the model reads; with an unknown model any of the three counts.
function checkPhaseLoad(ctx: Ctx, o: Obj, model: LoadModelName | undefined): void {
  const allowed = model ? MODEL_LOAD_KEYS[model] : ALL_LOAD_KEYS;
  const present = ALL_LOAD_KEYS.filter((key) => o[key] !== undefined);
  const used = present.filter((key) => allowed.includes(key));
  for (const key of present) {
    if (!allowed.includes(key)) report(child(ctx, key), `not allowed with model "${model}" (use ${quoted(allowed, ' or ')})`);
  }
  if (used.length > 1) report(ctx, `must set only one of ${quoted(used)}`);
  if (present.length === 0 && allowed.length === 1) report(child(ctx, allowed[0]!), 'is required');
  if (present.length === 0 && allowed.length > 1) report(ctx, `must set one of ${quoted(allowed)}`);
  for (const key of used) LOAD_VALUE_CHECKS[key](child(ctx, key), o[key]);
}

function checkRate(ctx: Ctx, v: unknown): void {
  if (isObj(v)) checkPattern(ctx, v);
  else report(ctx, typeof v === 'number' ? 'must be a pattern object (use "rate_per_s" for a fixed rate)' : 'must be an object');
}

// A fixed concurrency counts requests in flight, so it is a whole number; a pattern is rounded at run time.
function checkConcurrency(ctx: Ctx, v: unknown): void {
  if (typeof v === 'number') checkNum(ctx, v, { integer: true, min: 1 });
  else if (isObj(v)) checkPattern(ctx, v);
  else report(ctx, 'must be a number or a pattern object');
}

// Phases are compared in start order against the furthest end so far, so a long phase that covers
// several later ones is caught for each of them.
function noOverlap(ctx: Ctx, spans: readonly (Span | undefined)[]): void {
  const indexed = spans.flatMap((span, i) => (span ? [{ ...span, i }] : []));
  indexed.sort((a, b) => a.startS - b.startS || a.i - b.i);
  let furthest: (Span & { i: number }) | undefined;
  for (const span of indexed) {
    if (furthest && span.startS < furthest.endS) {
      report(child(ctx, span.i), `overlaps phases[${furthest.i}] (which runs until ${furthest.endS} s)`);
    }
    if (!furthest || span.endS > furthest.endS) furthest = span;
  }
}

const PATTERN_CHECKS: Record<Pattern['pattern'], (ctx: Ctx, o: Obj) => void> = {
  constant: checkConstant,
  ramp: checkRamp,
  'noisy-sinusoidal': checkNoisySinusoidal,
};

// Unknown keys are checked per pattern kind, so nothing more is said until `pattern` itself is valid.
function checkPattern(ctx: Ctx, o: Obj): void {
  const kind = oneOf(ctx, o, 'pattern', Object.keys(PATTERN_CHECKS) as Pattern['pattern'][]);
  if (kind) PATTERN_CHECKS[kind](ctx, o);
}

function checkConstant(ctx: Ctx, o: Obj): void {
  knownKeys(ctx, o, keysOf<ConstantPattern>({ pattern: true, value: true }));
  num(ctx, o, 'value', { exclusiveMin: 0 });
}

function checkRamp(ctx: Ctx, o: Obj): void {
  knownKeys(ctx, o, keysOf<RampPattern>({ pattern: true, from: true, to: true }));
  const from = num(ctx, o, 'from', { min: 0 });
  const to = num(ctx, o, 'to', { min: 0 });
  // A ramp from 0 to 0 offers nothing: almost certainly a mistake.
  if (from === 0 && to === 0) report(ctx, '"from" and "to" must not both be 0');
}

const NOISY_KEYS = keysOf<NoisySinusoidalPattern>({
  pattern: true,
  center: true,
  amplitude: true,
  period_s: true,
  noise: true,
  spike_probability: true,
  phase_offset: true,
  ramp_s: true,
});

function checkNoisySinusoidal(ctx: Ctx, o: Obj): void {
  knownKeys(ctx, o, NOISY_KEYS);
  num(ctx, o, 'center', { exclusiveMin: 0 });
  num(ctx, o, 'amplitude', { min: 0 });
  num(ctx, o, 'period_s', { exclusiveMin: 0 });
  num(ctx, o, 'noise', { min: 0, optional: true });
  num(ctx, o, 'spike_probability', SHARE);
  num(ctx, o, 'phase_offset', { optional: true });
  num(ctx, o, 'ramp_s', { min: 0, optional: true });
}

function checkSlo(ctx: Ctx, o: Obj): void {
  knownKeys(ctx, o, SLO_KEYS);
  num(ctx, o, 'ttft_p95_ms', OPTIONAL_MS);
  num(ctx, o, 'tpot_p95_ms', OPTIONAL_MS);
  num(ctx, o, 'e2e_p95_ms', OPTIONAL_MS);
  num(ctx, o, 'success_rate_min', SHARE);
  oneOf(ctx, o, 'basis', ['sent', 'intended'], true);
}

function checkWindow(ctx: Ctx, o: Obj, durationS: number | undefined): string | undefined {
  knownKeys(ctx, o, WINDOW_KEYS);
  const name = str(ctx, o, 'name', SHORT_NAME);
  if (name === ALL_WINDOW) report(child(ctx, 'name'), '"all" is reserved (it is always the whole run)');
  const startS = num(ctx, o, 'start_s', { min: 0 });
  const endS = num(ctx, o, 'end_s', { exclusiveMin: 0 });
  if (startS !== undefined && endS !== undefined && endS <= startS) report(child(ctx, 'end_s'), `must be > start_s (${startS})`);
  if (endS !== undefined && durationS !== undefined && endS > durationS) {
    report(child(ctx, 'end_s'), `must be <= duration_s (${durationS})`);
  }
  return name === ALL_WINDOW ? undefined : name;
}

function checkScrape(ctx: Ctx, o: Obj): string | undefined {
  knownKeys(ctx, o, SCRAPE_KEYS);
  const name = str(ctx, o, 'name', SHORT_NAME);
  httpUrl(ctx, o, 'url');
  num(ctx, o, 'interval_s', { min: 0.1 });
  return name;
}
