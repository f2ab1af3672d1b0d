// Validation of `loadfleet.plan/v1` (../spec/plan.md). Plans are written by hand, so every problem
// is collected in one pass as `<json path>: <what is wrong>` instead of stopping at the first one:
// the shape from the plan's definition (plan-schema.ts), then the rules a schema cannot say, one
// small function per object kind. Each rule relies only on the fields whose shape is right.
import type { Static } from '@sinclair/typebox';
import { costRules } from './cost-schema.js';
import type { LoadModelName, Phase, Plan } from './plan.js';
import { PLAN_DEFAULTS, PROMPT_DEFAULTS, TRACES_DEFAULTS } from './plan.js';
import { HEADER_NAME, Phase as PhaseDef, PlanFile } from './plan-schema.js';
import { apiRules, generates } from './plan-validate-api.js';
import { promptRules, sessionRules, workloadDefaults } from './plan-validate-workload.js';
import { checkShape, fitsShape } from './schema-problems.js';
import type { Ctx, Obj } from './validate-kit.js';
import { child, eachObj, isObj, noDuplicates, numAt, problemLines, quoted, report, rootCtx } from './validate-kit.js';

/** Outcome of validation: the plan with defaults filled in, or every problem found. */
export type PlanValidation = { ok: true; plan: Plan } | { ok: false; problems: string[] };

const PLAN_FIELDS = Object.keys(PlanFile.properties);

/** Validates an already-parsed plan document; never mutates `input`. */
export function validatePlan(input: unknown): PlanValidation {
  const ctx = rootCtx();
  checkShape(ctx, PlanFile, input);
  if (isObj(input)) planRules(ctx, input);
  if (ctx.problems.length > 0) return { ok: false, problems: problemLines(ctx.problems, PLAN_FIELDS) };
  // Validation has proved the shape, so the clone is a plan file apart from the defaulted fields.
  return { ok: true, plan: withDefaults(structuredClone(input) as Static<typeof PlanFile>) };
}

function withDefaults(file: Static<typeof PlanFile>): Plan {
  const { $schema: _editorsOnly, target, ...plan } = file;
  return {
    ...plan,
    drain_timeout_s: plan.drain_timeout_s ?? PLAN_DEFAULTS.drain_timeout_s,
    max_error_share: plan.max_error_share ?? PLAN_DEFAULTS.max_error_share,
    ...(target && { target: { ...target, timeout_s: target.timeout_s ?? PLAN_DEFAULTS.timeout_s } }),
    classes: plan.classes.map((cls) => workloadDefaults({ ...cls, prompt: { ...PROMPT_DEFAULTS, ...cls.prompt } })),
  };
}

/** The window name that always means the whole run. */
const ALL_WINDOW = 'all';

function planRules(ctx: Ctx, o: Obj): void {
  const durationS = fitsShape(PlanFile.properties.duration_s, o['duration_s']) ? o['duration_s'] : undefined;
  if (isObj(o['target'])) {
    httpUrl(child(child(ctx, 'target'), 'base_url'), o['target']['base_url']);
    headerRules(child(child(ctx, 'target'), 'headers'), o['target']['headers']);
  }
  const targetApi = isObj(o['target']) ? o['target']['api'] : undefined;
  eachObj(ctx, o, 'classes', (c, cls) => classRules(c, cls, durationS, targetApi));
  eachObj(ctx, o, 'classes', (c, cls) => apiRules(c, cls, targetApi));
  eachObj(ctx, o, 'windows', (c, w) => windowRules(c, w, durationS));
  eachObj(ctx, o, 'scrape', (c, s) => httpUrl(child(c, 'url'), s['url']));
  if (isObj(o['abort'])) abortRules(child(ctx, 'abort'), o['abort'], o['classes']);
  if (isObj(o['records'])) sampledRecordsRules(child(ctx, 'records'), o);
  if (isObj(o['cost'])) costRules(child(ctx, 'cost'), o['cost']);
  if (isObj(o['traces'])) tracesRules(child(ctx, 'traces'), o['traces']);
  noDuplicates(child(ctx, 'classes'), o['classes'], 'name');
  noDuplicates(child(ctx, 'windows'), o['windows'], 'name');
  noDuplicates(child(ctx, 'scrape'), o['scrape'], 'name');
}

// The receiver's two listeners: real ports, and not the same one twice.
function tracesRules(ctx: Ctx, t: Obj): void {
  const port = (v: unknown): number | null => (typeof v === 'string' ? Number(v.slice(v.lastIndexOf(':') + 1)) : null);
  for (const k of ['http', 'grpc'] as const) if ((port(t[k]) ?? 0) > 65_535) report(child(ctx, k), 'port must be at most 65535');
  const [h, g] = [t['http'] ?? TRACES_DEFAULTS.http, t['grpc'] ?? TRACES_DEFAULTS.grpc];
  if (h === g && port(h) !== 0) report(child(ctx, 'grpc'), 'must not be the same address as traces.http');
}

function httpUrl(ctx: Ctx, v: unknown): void {
  if (typeof v !== 'string' || v === '') return;
  const url = URL.canParse(v) ? new URL(v) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') report(ctx, 'must be an http(s) URL');
  // Plans live in git; a password in a URL would be a secret in the repository.
  else if (url.username !== '' || url.password !== '') report(ctx, 'must not contain credentials');
}

// Header values are checked by the schema; names here, where the same name in two spellings can be seen.
function headerRules(ctx: Ctx, headers: unknown): void {
  if (!isObj(headers)) return;
  const firstSpelling = new Map<string, string>(); // lower-case name → the spelling seen first
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase();
    const first = firstSpelling.get(lower);
    const c = child(ctx, name);
    if (!HEADER_NAME.test(name)) report(c, 'must be a valid HTTP header name');
    // The key is read from target.api_key_env on each agent; it must never be written into a plan.
    else if (lower === 'authorization') report(c, 'must not be set in a plan (the key is read from target.api_key_env)');
    else if (first !== undefined) report(c, `same header as ${JSON.stringify(first)} (names are case-insensitive)`);
    else firstSpelling.set(lower, name);
  }
}

function classRules(ctx: Ctx, cls: Obj, durationS: number | undefined, targetApi: unknown): void {
  headerRules(child(ctx, 'headers'), cls['headers']);
  const load = isObj(cls['load']) ? cls['load'] : {};
  const model = MODELS.find((m) => m === load['model']);
  if (isObj(cls['prompt'])) promptRules(child(ctx, 'prompt'), cls['prompt'], model, generates(cls, targetApi));
  if (isObj(cls['load'])) loadRules(child(ctx, 'load'), load, model, durationS);
  // A closed loop has no intended send time, so nothing to measure TTFT from but the send.
  if (model === 'concurrency' && isObj(cls['slo']) && cls['slo']['basis'] === 'intended')
    report(child(child(ctx, 'slo'), 'basis'), '"intended" needs an open-loop class (a closed loop has no intended send time)');
  // Only a session's first turn has an intended time; later turns would silently leave the p95 and never count as goodput.
  if (model === 'sessions' && isObj(cls['slo']) && cls['slo']['basis'] === 'intended')
    report(
      child(child(ctx, 'slo'), 'basis'),
      '"intended" cannot judge a sessions class (only a session\'s first turn has an intended send time; later turns follow the previous answer); use "sent"',
    );
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
const MODELS = Object.keys(MODEL_LOAD_KEYS) as LoadModelName[];

interface Span {
  startS: number;
  endS: number;
}

function loadRules(ctx: Ctx, o: Obj, model: LoadModelName | undefined, durationS: number | undefined): void {
  // `trace` belongs to model "trace" and `session` to "sessions": required there, refused elsewhere.
  for (const [key, owner] of [
    ['trace', 'trace'],
    ['session', 'sessions'],
  ] as const) {
    if (o[key] === undefined && model === owner) report(child(ctx, key), 'is required');
    if (o[key] !== undefined && model !== owner && model !== undefined) report(child(ctx, key), `only allowed with model "${owner}"`);
  }
  if (isObj(o['session']) && model === 'sessions') sessionRules(child(ctx, 'session'), o['session']);
  const phases = o['phases'];
  // A trace's rows are its arrivals. An empty list is what validation itself fills in, so a validated plan validates again.
  if (model === 'trace') {
    if (phases !== undefined && !(Array.isArray(phases) && phases.length === 0))
      report(child(ctx, 'phases'), 'not allowed with model "trace" (the rows are the arrivals)');
    return;
  }
  if (phases === undefined) report(child(ctx, 'phases'), 'is required');
  else if (Array.isArray(phases) && phases.length === 0) report(child(ctx, 'phases'), 'must not be empty');
  const spans: (Span | undefined)[] = [];
  eachObj(ctx, o, 'phases', (c, phase) => spans.push(phaseRules(c, phase, model, durationS)));
  noOverlap(child(ctx, 'phases'), spans);
  if (model !== 'concurrency' && Array.isArray(phases)) scheduleSizeRule(child(ctx, 'phases'), phases);
}

/** The most open-loop arrivals one class may schedule: each is 8 bytes on the coordinator and on every agent. */
export const MAX_CLASS_ARRIVALS = 1_000_000_000;

// A schedule is built whole before the run (schedule.ts): past this size it cannot be held, and
// counting it alone would take minutes to hours, so such a plan is refused here instead.
function scheduleSizeRule(ctx: Ctx, phases: readonly unknown[]): void {
  let arrivals = 0;
  for (const phase of phases) {
    const length = numAt(phase, 'duration_s');
    const rate = numAt(phase, 'rate_per_s') ?? (isObj(phase) ? patternBound(phase['rate']) : undefined);
    if (length !== undefined && rate !== undefined && length > 0 && rate > 0) arrivals += length * rate;
  }
  if (arrivals > MAX_CLASS_ARRIVALS)
    report(
      ctx,
      `offer about ${arrivals.toPrecision(3)} requests (rate × duration); a class schedules at most ${MAX_CLASS_ARRIVALS.toExponential()}`,
    );
}

// A rate pattern's highest value, near enough to size its schedule (the noise is left out).
function patternBound(p: unknown): number | undefined {
  if (!isObj(p)) return undefined;
  const n = (k: string): number => numAt(p, k) ?? 0;
  if (p['pattern'] === 'constant') return n('value');
  if (p['pattern'] === 'ramp') return Math.max(n('from'), n('to'));
  if (p['pattern'] === 'noisy-sinusoidal') return n('center') + Math.abs(n('amplitude'));
  return undefined;
}

function phaseRules(ctx: Ctx, o: Obj, model: LoadModelName | undefined, durationS: number | undefined): Span | undefined {
  phaseLoadRules(ctx, o, model);
  const { start_s: start, duration_s: length } = PhaseDef.properties;
  if (!fitsShape(start, o['start_s']) || !fitsShape(length, o['duration_s'])) return undefined;
  const endS = o['start_s'] + o['duration_s'];
  if (durationS !== undefined && endS > durationS) report(ctx, `ends at ${endS} s, after duration_s (${durationS})`);
  return { startS: o['start_s'], endS };
}

// Exactly one load field, and one the model reads; with an unknown model any of the three counts.
function phaseLoadRules(ctx: Ctx, o: Obj, model: LoadModelName | undefined): void {
  const allowed = model ? MODEL_LOAD_KEYS[model] : ALL_LOAD_KEYS;
  const present = ALL_LOAD_KEYS.filter((key) => o[key] !== undefined);
  const used = present.filter((key) => allowed.includes(key));
  for (const key of present) {
    if (!allowed.includes(key)) report(child(ctx, key), `not allowed with model "${model}" (use ${quoted(allowed, ' or ')})`);
  }
  if (used.length > 1) report(ctx, `must set only one of ${quoted(used)}`);
  if (present.length === 0 && allowed.length === 1) report(child(ctx, allowed[0]!), 'is required');
  if (present.length === 0 && allowed.length > 1) report(ctx, `must set one of ${quoted(allowed)}`);
  // A ramp from 0 to 0 offers nothing: almost certainly a mistake.
  for (const key of ['rate', 'concurrency'] as const) {
    const v = o[key];
    if (isObj(v) && v['pattern'] === 'ramp' && v['from'] === 0 && v['to'] === 0)
      report(child(ctx, key), '"from" and "to" must not both be 0');
  }
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

function windowRules(ctx: Ctx, o: Obj, durationS: number | undefined): void {
  if (o['name'] === ALL_WINDOW) report(child(ctx, 'name'), '"all" is reserved (it is always the whole run)');
  const startS = numAt(o, 'start_s');
  const endS = numAt(o, 'end_s');
  if (startS === undefined || endS === undefined || startS < 0 || endS <= 0) return;
  if (endS <= startS) report(child(ctx, 'end_s'), `must be > start_s (${startS})`);
  if (durationS !== undefined && endS > durationS) report(child(ctx, 'end_s'), `must be <= duration_s (${durationS})`);
}

// Sampled records: the figures that need every record of a class (by session turn, per adapter,
// per tool call, and the abort rules' running rates) have no tally yet, so such plans are refused.
function sampledRecordsRules(ctx: Ctx, o: Obj): void {
  if (o['abort'] !== undefined) report(ctx, 'cannot be sampled with abort rules: they judge every record as it arrives');
  if (!Array.isArray(o['classes'])) return;
  for (const c of o['classes']) {
    if (!isObj(c)) continue;
    const needs = [
      isObj(c['load']) && c['load']['model'] === 'sessions' ? 'sessions (figures by turn)' : '',
      c['adapters'] !== undefined ? 'adapters (per-adapter counts)' : '',
      isObj(c['prompt']) && c['prompt']['tools'] !== undefined ? 'tools (tool-call figures)' : '',
    ].filter(Boolean);
    if (needs.length > 0) report(ctx, `cannot be sampled: class ${String(c['name'])} uses ${needs.join(', ')}, which need every record`);
  }
}

// An abort rule must say what to stop on, and a latency multiple needs a latency bound to multiply.
function abortRules(ctx: Ctx, o: Obj, classes: unknown): void {
  if (o['error_share_above'] === undefined && o['p95_over_slo'] === undefined)
    report(ctx, 'needs error_share_above or p95_over_slo (nothing to stop on)');
  const bounded =
    Array.isArray(classes) &&
    classes.some(
      (c) => isObj(c) && isObj(c['slo']) && ['ttft_p95_ms', 'tpot_p95_ms', 'e2e_p95_ms'].some((k) => (c['slo'] as Obj)[k] !== undefined),
    );
  if (o['p95_over_slo'] !== undefined && !bounded)
    report(child(ctx, 'p95_over_slo'), 'no class declares a latency bound (slo.ttft_p95_ms, tpot_p95_ms or e2e_p95_ms) to multiply');
}
