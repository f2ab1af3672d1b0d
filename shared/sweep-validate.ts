// Validation of `loadfleet.sweep/v1` in the house style (see plan-validate.ts): every problem in one
// pass as `<json path>: <what is wrong>`, unknown keys are errors. `validateSweep` checks the file on
// its own (its shape from the definition in sweep.ts, then the rules across its fields);
// `checkSweepAgainstPlan` checks what only the plan can tell (the class, its one phase, where the
// warm-up ends), with paths still pointing into the sweep file.
import type { Plan, TrafficClass } from './plan.js';
import { isClosedLoop } from './plan.js';
import { checkShape, fitsShape } from './schema-problems.js';
import type { Sweep } from './sweep.js';
import { SweepFile } from './sweep.js';
import type { Ctx, Obj } from './validate-kit.js';
import { child, isObj, numAt, problemLines, quoted, report, rootCtx } from './validate-kit.js';

/** Outcome of validation: the sweep, or every problem found. */
export type SweepValidation = { ok: true; sweep: Sweep } | { ok: false; problems: string[] };

const FIELDS = SweepFile.properties;

/** Validates an already-parsed sweep document; never mutates `input`. */
export function validateSweep(input: unknown): SweepValidation {
  const ctx = rootCtx();
  checkShape(ctx, SweepFile, input);
  if (isObj(input)) sweepRules(ctx, input);
  if (ctx.problems.length > 0) return { ok: false, problems: problemLines(ctx.problems, Object.keys(FIELDS)) };
  const { $schema: _editorsOnly, ...sweep } = structuredClone(input) as typeof SweepFile.static;
  return { ok: true, sweep };
}

function sweepRules(ctx: Ctx, o: Obj): void {
  const stageS = fitsShape(FIELDS.stage_duration_s, o['stage_duration_s']) ? o['stage_duration_s'] : undefined;
  const warmupS = fitsShape(FIELDS.warmup_s, o['warmup_s']) ? o['warmup_s'] : undefined;
  if (stageS !== undefined && warmupS !== undefined && warmupS >= stageS)
    report(child(ctx, 'warmup_s'), `must be < stage_duration_s (${stageS}), or nothing is measured`);
  const maxValue = fitsShape(FIELDS.stop, o['stop']) ? o['stop'].max_value : undefined;
  if (isObj(o['strategy'])) strategyRules(child(ctx, 'strategy'), o['strategy'], o['scale'] === 'concurrency', maxValue);
}

function strategyRules(ctx: Ctx, o: Obj, concurrency: boolean, maxValue: number | undefined): void {
  // A concurrency counts requests in flight, so every value the strategy can produce is a whole number.
  const value = (key: string): number | undefined => {
    const v = numAt(o, key);
    if (v === undefined || v <= 0) return undefined;
    if (concurrency && !Number.isInteger(v)) return void report(child(ctx, key), 'must be an integer');
    return v;
  };
  const underMax = (key: string, v: number | undefined): void => {
    if (v !== undefined && maxValue !== undefined && v > maxValue) report(child(ctx, key), `must be <= stop.max_value (${maxValue})`);
  };
  if (o['type'] === 'stages' && Array.isArray(o['values'])) stagesRules(child(ctx, 'values'), o['values'], concurrency, maxValue);
  if (o['type'] === 'geometric') {
    const start = value('start');
    const max = value('max');
    if (start !== undefined && max !== undefined && max < start) report(child(ctx, 'max'), `must be >= start (${start})`);
    underMax('start', start);
  }
  if (o['type'] === 'bisect') {
    const pass = value('pass');
    const fail = value('fail');
    const resolution = value('resolution');
    if (pass !== undefined && fail !== undefined && fail <= pass) report(child(ctx, 'fail'), `must be > pass (${pass})`);
    else if (pass !== undefined && fail !== undefined && resolution !== undefined && resolution >= fail - pass)
      report(child(ctx, 'resolution'), `must be < fail − pass (${fail - pass}), or there is nothing to search`);
    underMax('fail', fail);
  }
}

// Stages escalate, so the values must rise: the stop rules assume every later stage is heavier.
function stagesRules(ctx: Ctx, values: readonly unknown[], concurrency: boolean, maxValue: number | undefined): void {
  let previous: number | undefined;
  values.forEach((v, i) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return;
    const c = child(ctx, i);
    if (concurrency && !Number.isInteger(v)) {
      report(c, 'must be an integer');
      return;
    }
    if (previous !== undefined && v <= previous) report(c, `must be > the value before it (${previous})`);
    if (maxValue !== undefined && v > maxValue) report(c, `must be <= stop.max_value (${maxValue})`);
    previous = v;
  });
}

// ---- against the plan

/** Problems only the plan can reveal, as `<sweep json path>: <what>` lines (empty when none). */
export function checkSweepAgainstPlan(sweep: Sweep, plan: Plan): string[] {
  const ctx = rootCtx();
  const cls = plan.classes.find((c) => c.name === sweep.class);
  if (!cls) {
    report(
      child(ctx, 'class'),
      `no class ${JSON.stringify(sweep.class)} in plan ${sweep.plan} (it has ${quoted(plan.classes.map((c) => c.name))})`,
    );
    return problemLines(ctx.problems, Object.keys(FIELDS));
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
  return problemLines(ctx.problems, Object.keys(FIELDS));
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
