// Pure: the plan one stage runs. Each stage is its own run of `stage_duration_s`: the scaled class's
// one phase runs from its start to the end of the stage at the stage's value, every other class
// keeps its phases (clipped to the stage), and a `measure` window from the end of the warm-up to the
// end of the stage is what the stage is judged on.
import type { Phase, Plan, TrafficClass, Window } from '../../shared/plan.js';
import type { Sweep } from '../../shared/sweep.js';

/** The window each stage is judged on. */
export const MEASURE_WINDOW = 'measure';

/** One stage's plan and where its measured window lies. */
export interface StagePlan {
  plan: Plan;
  measure: { start_s: number; end_s: number };
}

/**
 * The plan of stage `index` (0-based) at `value`. `drainTimeoutS` caps the plan's drain so the stage
 * fits the sweep's time budget. The seed moves with the stage so a real endpoint's prefix cache never
 * sees one stage's prompts again in the next.
 */
export function buildStagePlan(plan: Plan, sweep: Sweep, value: number, index: number, drainTimeoutS: number): StagePlan {
  const lengthS = sweep.stage_duration_s;
  const scaled = plan.classes.find((c) => c.name === sweep.class);
  if (!scaled) throw new Error(`class ${sweep.class} is not in the plan (checkSweepAgainstPlan says so first)`);
  // A trace starts at the run start (it has no phase).
  const phaseStartS = scaled.load.phases[0]?.start_s ?? 0;
  const measure = { start_s: phaseStartS + sweep.warmup_s, end_s: lengthS };
  const classes = plan.classes.map((c) => (c.name === sweep.class ? scaledClass(c, sweep, value, phaseStartS) : clipped(c, lengthS)));
  // Plan windows that fit the stage stay (their figures are in run.json too); `measure` is ours.
  const windows: Window[] = (plan.windows ?? []).filter((w) => w.name !== MEASURE_WINDOW && w.end_s <= lengthS);
  windows.push({ name: MEASURE_WINDOW, ...measure });
  const suffix = `-stage${index + 1}`;
  return {
    plan: {
      ...plan,
      name: `${plan.name.slice(0, 128 - suffix.length)}${suffix}`,
      seed: plan.seed + index,
      duration_s: lengthS,
      drain_timeout_s: Math.min(plan.drain_timeout_s ?? drainTimeoutS, drainTimeoutS),
      classes,
      windows,
    },
    measure,
  };
}

function scaledClass(c: TrafficClass, sweep: Sweep, value: number, startS: number): TrafficClass {
  const slo = { ...c.slo, ...sweep.slo };
  const withSlo = Object.keys(slo).length > 0 ? { slo } : {};
  if (sweep.scale === 'speed') {
    // value× the recorded speed: every gap between rows divided by value.
    const trace = { ...c.load.trace!, time_scale: (c.load.trace!.time_scale ?? 1) / value };
    return { ...c, load: { ...c.load, trace }, ...withSlo };
  }
  const phase: Phase =
    sweep.scale === 'rate'
      ? { start_s: startS, duration_s: sweep.stage_duration_s - startS, rate_per_s: value }
      : { start_s: startS, duration_s: sweep.stage_duration_s - startS, concurrency: value };
  return { ...c, load: { ...c.load, phases: [phase] }, ...withSlo };
}

// Background classes run as planned; a phase past the stage's end is dropped, one across it is cut.
function clipped(c: TrafficClass, lengthS: number): TrafficClass {
  const phases = c.load.phases
    .filter((p) => p.start_s < lengthS)
    .map((p) => ({ ...p, duration_s: Math.min(p.duration_s, lengthS - p.start_s) }));
  return { ...c, load: { ...c.load, phases } };
}
