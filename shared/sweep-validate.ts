// Validation of `loadfleet.sweep/v1` in the house style (see plan-validate.ts): every problem in one
// pass as `<json path>: <what is wrong>`, unknown keys are errors. `validateSweep` checks the file on
// its own; `checkSweepAgainstPlan` checks what only the plan can tell (the class, its one phase,
// where the warm-up ends), with paths still pointing into the sweep file.
import type { Plan, TrafficClass } from './plan.js';
import { isClosedLoop } from './plan.js';
import type { BisectStrategy, GeometricStrategy, StagesStrategy, StopRules, Sweep, SweepScale, SweepSlo } from './sweep.js';
import { SWEEP_SCHEMA } from './sweep.js';
import type { Ctx, NumRule, Obj } from './validate-kit.js';
import { checkNum, child, fail, field, isObj, keysOf, knownKeys, num, obj, oneOf, quoted, report, str } from './validate-kit.js';

/** Outcome of validation: the sweep, or every problem found. */
export type SweepValidation = { ok: true; sweep: Sweep } | { ok: false; problems: string[] };

const SWEEP_KEYS = keysOf<Sweep>({
  schema: true,
  name: true,
  plan: true,
  class: true,
  scale: true,
  strategy: true,
  stage_duration_s: true,
  warmup_s: true,
  stop: true,
  slo: true,
});
const STOP_KEYS = keysOf<StopRules>({ max_failing_stages: true, max_error_share: true, max_value: true, time_budget_s: true });
const SLO_KEYS = keysOf<SweepSlo>({ ttft_p95_ms: true, tpot_p95_ms: true, success_rate_min: true, basis: true });
const STRATEGY_KEYS = {
  stages: keysOf<StagesStrategy>({ type: true, values: true }),
  geometric: keysOf<GeometricStrategy>({ type: true, start: true, factor: true, max: true }),
  bisect: keysOf<BisectStrategy>({ type: true, pass: true, fail: true, resolution: true }),
} as const;
const STRATEGY_TYPES = Object.keys(STRATEGY_KEYS) as (keyof typeof STRATEGY_KEYS)[];

// One day, as for plans: a longer stage is almost certainly a unit mistake.
const MAX_STAGE_S = 86_400;
const NAME_RULE = { pattern: /^[A-Za-z0-9._-]+$/, hint: 'must use only letters, digits, ".", "_" and "-"', maxLength: 100 };

/** Validates an already-parsed sweep document; never mutates `input`. */
export function validateSweep(input: unknown): SweepValidation {
  if (!isObj(input)) return { ok: false, problems: ['$: must be an object'] };
  const ctx: Ctx = { path: '', problems: [] };
  checkSweep(ctx, input);
  if (ctx.problems.length > 0) return { ok: false, problems: ctx.problems };
  return { ok: true, sweep: structuredClone(input) as unknown as Sweep };
}

function checkSweep(ctx: Ctx, o: Obj): void {
  knownKeys(ctx, o, SWEEP_KEYS);
  oneOf(ctx, o, 'schema', [SWEEP_SCHEMA]);
  str(ctx, o, 'name', NAME_RULE);
  str(ctx, o, 'plan');
  str(ctx, o, 'class', { ...NAME_RULE, maxLength: 64 });
  const scale = oneOf<SweepScale>(ctx, o, 'scale', ['rate', 'concurrency', 'speed']);
  const stageS = num(ctx, o, 'stage_duration_s', { exclusiveMin: 0, max: MAX_STAGE_S });
  const warmupS = num(ctx, o, 'warmup_s', { min: 0 });
  if (stageS !== undefined && warmupS !== undefined && warmupS >= stageS)
    report(child(ctx, 'warmup_s'), `must be < stage_duration_s (${stageS}), or nothing is measured`);
  const maxValue = obj(ctx, o, 'stop', checkStop, true);
  obj(ctx, o, 'strategy', (c, s) => checkStrategy(c, s, scale, maxValue), false);
  obj(ctx, o, 'slo', checkSlo, true);
}

function checkStop(ctx: Ctx, o: Obj): number | undefined {
  knownKeys(ctx, o, STOP_KEYS);
  num(ctx, o, 'max_failing_stages', { integer: true, min: 1, optional: true });
  num(ctx, o, 'max_error_share', { min: 0, max: 1, optional: true });
  num(ctx, o, 'time_budget_s', { exclusiveMin: 0, optional: true });
  return num(ctx, o, 'max_value', { exclusiveMin: 0, optional: true });
}

function checkSlo(ctx: Ctx, o: Obj): void {
  knownKeys(ctx, o, SLO_KEYS);
  num(ctx, o, 'ttft_p95_ms', { exclusiveMin: 0, optional: true });
  num(ctx, o, 'tpot_p95_ms', { exclusiveMin: 0, optional: true });
  num(ctx, o, 'success_rate_min', { min: 0, max: 1, optional: true });
  oneOf(ctx, o, 'basis', ['sent', 'intended'], true);
}

// A concurrency counts requests in flight, so every value the strategy can produce is a whole number.
function valueRule(scale: SweepScale | undefined): NumRule {
  return scale === 'concurrency' ? { integer: true, min: 1 } : { exclusiveMin: 0 };
}

function checkStrategy(ctx: Ctx, o: Obj, scale: SweepScale | undefined, maxValue: number | undefined): void {
  const type = oneOf(ctx, o, 'type', STRATEGY_TYPES);
  if (type === undefined) return; // unknown keys depend on the type, so nothing more is said
  knownKeys(ctx, o, STRATEGY_KEYS[type]);
  const rule = valueRule(scale);
  const underMax = (key: string, v: number | undefined): void => {
    if (v !== undefined && maxValue !== undefined && v > maxValue) report(child(ctx, key), `must be <= stop.max_value (${maxValue})`);
  };
  if (type === 'stages') checkStages(ctx, o, rule, maxValue);
  if (type === 'geometric') {
    const start = num(ctx, o, 'start', rule);
    num(ctx, o, 'factor', { exclusiveMin: 1, max: 100 });
    const max = num(ctx, o, 'max', rule);
    if (start !== undefined && max !== undefined && max < start) report(child(ctx, 'max'), `must be >= start (${start})`);
    underMax('start', start);
  }
  if (type === 'bisect') {
    const pass = num(ctx, o, 'pass', rule);
    const failAt = num(ctx, o, 'fail', rule);
    const resolution = num(ctx, o, 'resolution', scale === 'concurrency' ? { integer: true, min: 1 } : { exclusiveMin: 0 });
    if (pass !== undefined && failAt !== undefined && failAt <= pass) report(child(ctx, 'fail'), `must be > pass (${pass})`);
    else if (pass !== undefined && failAt !== undefined && resolution !== undefined && resolution >= failAt - pass)
      report(child(ctx, 'resolution'), `must be < fail − pass (${failAt - pass}), or there is nothing to search`);
    underMax('fail', failAt);
  }
}

// Stages escalate, so the values must rise: the stop rules assume every later stage is heavier.
function checkStages(ctx: Ctx, o: Obj, rule: NumRule, maxValue: number | undefined): void {
  const v = field(ctx, o, 'values');
  if (v === undefined) return;
  const c = child(ctx, 'values');
  if (!Array.isArray(v)) return void fail(c, 'must be an array');
  if (v.length === 0) return void fail(c, 'must not be empty');
  let previous: number | undefined;
  v.forEach((item: unknown, i) => {
    const ci = child(c, i);
    const n = checkNum(ci, item, rule);
    if (n === undefined) return;
    if (previous !== undefined && n <= previous) report(ci, `must be > the value before it (${previous})`);
    if (maxValue !== undefined && n > maxValue) report(ci, `must be <= stop.max_value (${maxValue})`);
    previous = n;
  });
}

// ---- against the plan

/** Problems only the plan can reveal, as `<sweep json path>: <what>` lines (empty when none). */
export function checkSweepAgainstPlan(sweep: Sweep, plan: Plan): string[] {
  const ctx: Ctx = { path: '', problems: [] };
  const cls = plan.classes.find((c) => c.name === sweep.class);
  if (!cls) {
    report(
      child(ctx, 'class'),
      `no class ${JSON.stringify(sweep.class)} in plan ${sweep.plan} (it has ${quoted(plan.classes.map((c) => c.name))})`,
    );
    return ctx.problems;
  }
  checkScaledClass(ctx, sweep, cls);
  for (const other of plan.classes) {
    if (other.name === sweep.class || other.load.model === 'trace') continue;
    if (!other.load.phases.some((p) => p.start_s < sweep.stage_duration_s))
      report(
        child(ctx, 'stage_duration_s'),
        `class ${JSON.stringify(other.name)} has no load in the first ${sweep.stage_duration_s} s (its first phase starts later)`,
      );
  }
  return ctx.problems;
}

function checkScaledClass(ctx: Ctx, sweep: Sweep, cls: TrafficClass): void {
  const closed = isClosedLoop(cls);
  const scaleCtx = child(ctx, 'scale');
  // A trace has no phase: its speed is what a stage changes, and only a trace has one.
  const trace = cls.load.model === 'trace';
  if (trace !== (sweep.scale === 'speed')) {
    report(
      scaleCtx,
      trace
        ? `class ${JSON.stringify(cls.name)} replays a trace: use "speed"`
        : `"speed" scales a replayed trace; class ${JSON.stringify(cls.name)} is model "${cls.load.model}"`,
    );
    return;
  }
  if (trace) return;
  if (sweep.scale === 'rate' && closed)
    report(scaleCtx, `class ${JSON.stringify(cls.name)} is closed loop (model "concurrency"): use "concurrency"`);
  if (sweep.scale === 'concurrency' && !closed)
    report(scaleCtx, `class ${JSON.stringify(cls.name)} is open loop (model "${cls.load.model}"): use "rate"`);
  const classCtx = child(ctx, 'class');
  if (cls.load.phases.length !== 1) {
    report(classCtx, `class ${JSON.stringify(cls.name)} must have exactly one phase to scale (it has ${cls.load.phases.length})`);
    return;
  }
  const phase = cls.load.phases[0]!;
  // Only a constant load has one value to replace; scaling a pattern's centre would be a different question.
  const pattern = phase.rate ?? (typeof phase.concurrency === 'object' ? phase.concurrency : undefined);
  if (pattern && pattern.pattern !== 'constant')
    report(
      classCtx,
      `the phase of ${JSON.stringify(cls.name)} uses a "${pattern.pattern}" pattern; a scaled phase needs rate_per_s, a constant rate or a constant concurrency`,
    );
  if (phase.start_s + sweep.warmup_s >= sweep.stage_duration_s)
    report(
      child(ctx, 'warmup_s'),
      `the scaled phase starts at ${phase.start_s} s, so start + warmup_s (${phase.start_s + sweep.warmup_s} s) must be < stage_duration_s (${sweep.stage_duration_s})`,
    );
}
