// Validation of `loadfleet.experiment/v1` in the plan validator's style: every problem at once as
// `<json path>: <what is wrong>`, unknown keys are errors. Two pure steps: the document's own shape
// (validateExperimentDoc), then the arms against the plan they vary (validateArms), where each
// arm's effective plan must itself be a valid plan. Reading the plan file is experiment-load.ts.
import { comparableColumns, figureColumns } from './analysis-figures.js';
import type { Arm, Compare, Experiment, Gates } from './experiment.js';
import { EXPERIMENT_DEFAULTS, EXPERIMENT_SCHEMA } from './experiment.js';
import { mergePatch } from './merge-patch.js';
import type { Plan } from './plan.js';
import { validatePlan } from './plan-validate.js';
import type { Ctx, Obj } from './validate-kit.js';
import {
  bool,
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
  suggestion,
} from './validate-kit.js';

/** The document's shape checked: the experiment with defaults, or every problem. */
export type ExperimentDocValidation = { ok: true; experiment: Experiment } | { ok: false; problems: string[] };

const EXPERIMENT_KEYS = keysOf<Experiment>({
  schema: true,
  name: true,
  business_question: true,
  plan: true,
  repeats: true,
  order: true,
  arms: true,
  compare: true,
  gates: true,
  claim_boundary: true,
});
const ARM_KEYS = keysOf<Arm>({ name: true, classes: true, overrides: true, expect_flow_control_engaged: true });
const COMPARE_KEYS = keysOf<Compare>({ metric: true, baseline: true, treatment: true });
const GATES_KEYS = keysOf<Gates>({ repeat_spread_max: true });
// Ten arms × a hundred repeats is already days of runs: a bigger number is almost certainly a typo.
const MAX_REPEATS = 100;
// Arm names are analysis keys and appear in run.json; anything printable, but not unbounded.
const ARM_NAME = { maxLength: 128, pattern: /^[^\p{Cc}]+$/u, hint: 'must not contain control characters' };

/** Checks the experiment document alone; never mutates `input`. */
export function validateExperimentDoc(input: unknown): ExperimentDocValidation {
  if (!isObj(input)) return { ok: false, problems: ['$: must be an object'] };
  const ctx: Ctx = { path: '', problems: [] };
  knownKeys(ctx, input, EXPERIMENT_KEYS);
  oneOf(ctx, input, 'schema', [EXPERIMENT_SCHEMA]);
  str(ctx, input, 'name', { pattern: /^[A-Za-z0-9._-]+$/, hint: 'must use only letters, digits, ".", "_" and "-"', maxLength: 128 });
  str(ctx, input, 'business_question', { maxLength: 1000 });
  str(ctx, input, 'claim_boundary', { maxLength: 2000, optional: true });
  str(ctx, input, 'plan');
  num(ctx, input, 'repeats', { integer: true, min: 1, max: MAX_REPEATS });
  oneOf(ctx, input, 'order', ['interleaved', 'blocked'], true);
  const armNames = list(ctx, input, 'arms', checkArm, { nonEmpty: true });
  noDuplicates(child(ctx, 'arms'), armNames);
  obj(ctx, input, 'compare', (c, o) => checkCompare(c, o, armNames));
  obj(ctx, input, 'gates', checkGates, true);
  if (ctx.problems.length > 0) return { ok: false, problems: ctx.problems };
  return { ok: true, experiment: withDefaults(structuredClone(input) as ExperimentInput) };
}

type ExperimentInput = Omit<Experiment, 'order' | 'gates'> & { order?: Experiment['order']; gates?: Partial<Gates> };

function withDefaults(e: ExperimentInput): Experiment {
  return {
    ...e,
    order: e.order ?? EXPERIMENT_DEFAULTS.order,
    gates: { repeat_spread_max: e.gates?.repeat_spread_max ?? EXPERIMENT_DEFAULTS.repeat_spread_max },
  };
}

function checkArm(ctx: Ctx, o: Obj): string | undefined {
  knownKeys(ctx, o, ARM_KEYS);
  const name = str(ctx, o, 'name', ARM_NAME);
  const classes = o['classes'];
  if (classes !== undefined) checkClassList(child(ctx, 'classes'), classes);
  obj(ctx, o, 'overrides', () => undefined, true);
  bool(ctx, o, 'expect_flow_control_engaged', true);
  return name;
}

function checkClassList(ctx: Ctx, v: unknown): void {
  if (!Array.isArray(v)) {
    report(ctx, 'must be an array of class names');
    return;
  }
  if (v.length === 0) {
    report(ctx, 'must not be empty (an arm runs at least one class)');
    return;
  }
  const seen = new Set<unknown>();
  v.forEach((name, i) => {
    if (typeof name !== 'string' || name === '') report(child(ctx, i), 'must be a class name');
    else if (seen.has(name)) report(child(ctx, i), `duplicate ${JSON.stringify(name)}`);
    seen.add(name);
  });
}

function checkCompare(ctx: Ctx, o: Obj, armNames: readonly (string | undefined)[] | undefined): void {
  knownKeys(ctx, o, COMPARE_KEYS);
  str(ctx, o, 'metric');
  const known = (armNames ?? []).filter((n): n is string => n !== undefined);
  const baseline = armRef(ctx, o, 'baseline', known);
  const treatment = armRef(ctx, o, 'treatment', known);
  if (baseline !== undefined && baseline === treatment) report(child(ctx, 'treatment'), 'must name a different arm than baseline');
}

function armRef(ctx: Ctx, o: Obj, key: string, known: readonly string[]): string | undefined {
  const name = str(ctx, o, key);
  if (name === undefined || known.length === 0 || known.includes(name)) return name;
  report(child(ctx, key), `no arm is named ${JSON.stringify(name)} (arms: ${quoted(known)})${suggestion(name, known)}`);
  return undefined;
}

function checkGates(ctx: Ctx, o: Obj): void {
  knownKeys(ctx, o, GATES_KEYS);
  num(ctx, o, 'repeat_spread_max', { min: 1, optional: true });
}

// ---- arms against the plan

/** Outcome of checking the arms against a valid plan: each arm's plan, or every problem. */
export type ArmsValidation = { ok: true; armPlans: Plan[] } | { ok: false; problems: string[] };

/**
 * Checks each arm against the plan, builds its effective plan and validates it; with a valid
 * experiment also checks that compare.metric is a figure of both compared arms. Takes the arms as
 * written so that an experiment with other problems still gets its arms checked.
 */
export function validateArms(arms: readonly unknown[], plan: Plan, compare?: Compare): ArmsValidation {
  const ctx: Ctx = { path: '', problems: [] };
  const armPlans = arms.map((arm, i) => (isObj(arm) ? armPlan(child(child(ctx, 'arms'), i), asArm(arm), plan) : undefined));
  if (compare) checkMetric(child(child(ctx, 'compare'), 'metric'), compare, arms, armPlans);
  if (ctx.problems.length > 0) return { ok: false, problems: ctx.problems };
  return { ok: true, armPlans: armPlans as Plan[] };
}

// The parts of an unvalidated arm that can be used (the shape problems are reported elsewhere).
function asArm(o: Obj): Arm {
  const classes = Array.isArray(o['classes']) ? o['classes'].filter((c): c is string => typeof c === 'string') : undefined;
  return {
    name: String(o['name']),
    ...(classes && { classes }),
    ...(isObj(o['overrides']) && { overrides: o['overrides'] }),
  };
}

/** The plan an arm runs: the overrides merged in, then only the named classes (in the plan's order). */
export function effectivePlan(arm: Arm, plan: Plan): unknown {
  const merged = arm.overrides ? mergePatch(plan, arm.overrides) : structuredClone(plan);
  if (!arm.classes || !isObj(merged) || !Array.isArray(merged['classes'])) return merged;
  const wanted = new Set(arm.classes);
  return { ...merged, classes: merged['classes'].filter((c: unknown) => isObj(c) && wanted.has(c['name'] as string)) };
}

function armPlan(ctx: Ctx, arm: Arm, plan: Plan): Plan | undefined {
  const merged = arm.overrides ? mergePatch(plan, arm.overrides) : plan;
  const available =
    isObj(merged) && Array.isArray(merged['classes']) ? merged['classes'].map((c: unknown) => (isObj(c) ? c['name'] : undefined)) : [];
  const names = available.filter((n): n is string => typeof n === 'string');
  let bad = false;
  arm.classes?.forEach((name, i) => {
    if (names.includes(name)) return;
    bad = true;
    report(
      child(child(ctx, 'classes'), i),
      `unknown class ${JSON.stringify(name)} (the plan has ${quoted(names)})${suggestion(name, names)}`,
    );
  });
  if (bad) return undefined;
  const result = validatePlan(effectivePlan(arm, plan));
  if (!result.ok) {
    for (const p of result.problems) report(ctx, `effective plan: ${p}`);
    return undefined;
  }
  reportColumnClash(ctx, result.plan);
  return result.plan;
}

// The compared figure must exist in both compared arms, or the analysis could only say "null".
function checkMetric(ctx: Ctx, compare: Compare, arms: readonly unknown[], armPlans: readonly (Plan | undefined)[]): void {
  const columnsOf = (armName: string): string[] | undefined => {
    const p = armPlans[arms.findIndex((a) => isObj(a) && a['name'] === armName)];
    return p
      ? comparableColumns(
          p.classes.map((c) => c.name),
          (p.windows ?? []).map((w) => w.name),
        )
      : undefined;
  };
  for (const armName of [compare.baseline, compare.treatment]) {
    const columns = columnsOf(armName);
    if (!columns || columns.includes(compare.metric)) continue;
    // A missing unit suffix is the likeliest slip, and further than suggestion()'s edit distance.
    const hint = columns.find((c) => c.startsWith(compare.metric));
    const didYouMean = hint ? ` (did you mean "${hint}"?)` : suggestion(compare.metric, columns);
    report(ctx, `${JSON.stringify(compare.metric)} is not a figure of arm ${JSON.stringify(armName)}${didYouMean}`);
  }
}

// Class and window names join with "_" into column names; two pairs must not give the same column.
function reportColumnClash(ctx: Ctx, plan: Plan): void {
  const columns = figureColumns(
    plan.classes.map((c) => c.name),
    (plan.windows ?? []).map((w) => w.name),
  );
  const dup = columns.find((c, i) => columns.indexOf(c) !== i);
  if (dup)
    report(ctx, `class and window names of plan ${JSON.stringify(plan.name)} give the column ${JSON.stringify(dup)} twice; rename one`);
}
