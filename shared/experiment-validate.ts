// Validation of `loadfleet.experiment/v1` in the plan validator's style: every problem at once as
// `<json path>: <what is wrong>`, unknown keys are errors. Two pure steps: the document alone (its
// shape from the definition in experiment.ts, then its names: arms unique, compared arms real),
// then the arms against the plan they vary (validateArms), where each arm's effective plan must
// itself be a valid plan. Reading the plan file is experiment-load.ts.
import { comparableColumns, figureColumns } from './analysis-figures.js';
import type { Arm, Compare, Experiment } from './experiment.js';
import { EXPERIMENT_DEFAULTS, ExperimentFile } from './experiment.js';
import { mergePatch } from './merge-patch.js';
import type { Plan } from './plan.js';
import { validatePlan } from './plan-validate.js';
import { checkShape } from './schema-problems.js';
import type { Ctx, Obj } from './validate-kit.js';
import { child, eachObj, isObj, noDuplicates, problemLines, quoted, report, rootCtx, suggestion } from './validate-kit.js';

/** The document's shape checked: the experiment with defaults, or every problem. */
export type ExperimentDocValidation = { ok: true; experiment: Experiment } | { ok: false; problems: string[] };

/** Checks the experiment document alone; never mutates `input`. */
export function validateExperimentDoc(input: unknown): ExperimentDocValidation {
  const ctx = rootCtx();
  checkShape(ctx, ExperimentFile, input);
  if (isObj(input)) {
    noDuplicates(child(ctx, 'arms'), input['arms'], 'name');
    eachObj(ctx, input, 'arms', (c, arm) => noDuplicates(child(c, 'classes'), arm['classes']));
    if (isObj(input['compare'])) compareRules(child(ctx, 'compare'), input['compare'], input['arms']);
  }
  if (ctx.problems.length > 0) return { ok: false, problems: problemLines(ctx.problems, Object.keys(ExperimentFile.properties)) };
  const { $schema: _editorsOnly, ...e } = structuredClone(input) as typeof ExperimentFile.static;
  return {
    ok: true,
    experiment: {
      ...e,
      order: e.order ?? EXPERIMENT_DEFAULTS.order,
      gates: { repeat_spread_max: e.gates?.repeat_spread_max ?? EXPERIMENT_DEFAULTS.repeat_spread_max },
    },
  };
}

function compareRules(ctx: Ctx, o: Obj, arms: unknown): void {
  const known = Array.isArray(arms) ? arms.flatMap((a: unknown) => (isObj(a) && typeof a['name'] === 'string' ? [a['name']] : [])) : [];
  const armRef = (key: string): string | undefined => {
    const name = o[key];
    if (typeof name !== 'string' || name === '') return undefined;
    if (known.length === 0 || known.includes(name)) return name;
    report(child(ctx, key), `no arm is named ${JSON.stringify(name)} (arms: ${quoted(known)})${suggestion(name, known)}`);
    return undefined;
  };
  const baseline = armRef('baseline');
  const treatment = armRef('treatment');
  if (baseline !== undefined && baseline === treatment) report(child(ctx, 'treatment'), 'must name a different arm than baseline');
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
  const ctx = rootCtx();
  const armPlans = arms.map((arm, i) => (isObj(arm) ? armPlan(child(child(ctx, 'arms'), i), asArm(arm), plan) : undefined));
  if (compare) checkMetric(child(child(ctx, 'compare'), 'metric'), compare, arms, armPlans);
  if (ctx.problems.length > 0) return { ok: false, problems: problemLines(ctx.problems, ['arms', 'compare']) };
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
