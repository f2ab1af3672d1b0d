// Pure: rows of finished runs + the experiment → the analysis.json document
// (`loadfleet.analysis/v1`, the shape of seeds/interference-analysis.json plus `runs[].run_dir`,
// the gate evidence and one definition per figure).

import { ARM_COST_DEFINITIONS, armPareto } from '../../figures/cost/arm-cost.js';
import type { Experiment } from '../../shared/experiment.js';
import { ANALYSIS_SCHEMA, type AnalysisJson } from '../../shared/result-schemas.js';
import { byArm, comparison, comparisonKeys, type Spread3 } from './aggregate.js';
import { answerText, defaultClaimBoundary, describeMetric } from './answer.js';
import { ARM_VERDICT_DEFINITIONS } from './arm-slo.js';
import type { Row } from './rows.js';

export { ANALYSIS_SCHEMA } from '../../shared/result-schemas.js';

/** Checks of one run that did not pass (failed or not evaluated), for the gate evidence. */
export interface RunChecks {
  data_quality: string[];
  slo_proof: string[];
}

/** What the analysis is built from. */
export interface AnalysisInput {
  experiment: Pick<Experiment, 'name' | 'business_question' | 'compare' | 'gates' | 'arms' | 'claim_boundary'>;
  planName: string;
  /** Words for the target, e.g. "the built-in engine-sim (a simulated vLLM replica behind a gateway)". */
  target: string;
  /** Every class and window of the arms' plans, for naming. */
  classes: readonly string[];
  windows: readonly string[];
  rows: readonly Row[];
  /** Per run_name: the checks that did not pass. */
  runChecks: Record<string, RunChecks>;
}

const DEFINITIONS: Record<string, string> = {
  run_count: 'finished runs (completed or degraded) the analysis is built from; aborted runs are left out',
  all_data_quality_valid: "true only when every run's run.json data_quality.valid is true (absent counts as not valid)",
  all_slo_proof_valid: "true only when every run's run.json slo_proof.valid is true (absent counts as not valid)",
  'by_arm.<arm>.<figure>':
    "median, min and max over the arm's runs of the per-run figure, rounded to 3 decimals (median of an even count: mean of the middle two); null when any run lacks it",
  'by_arm.<arm>.http_200_total': "HTTP 200 responses summed over the arm's runs (http_429_total likewise)",
  'by_arm.<arm>.flow_control_materially_engaged_runs':
    "how many of the arm's runs had flow control materially engaged (see run.json server)",
  'by_arm.<arm>.repeat_spread':
    "max / min over the arm's runs of the compared figure, rounded to 3 decimals; stable is true only when it is at most limit (gates.repeat_spread_max)",
  comparison:
    'treatment median − baseline median (…_increase…) and treatment median / baseline median (…_factor) of the compared figure, from the medians as reported, rounded to 3 decimals',
  'runs[].<class>_<window>_<pNN>_<figure>_ms':
    "the run's own percentile from run.json classes.<class>.windows.<window> (ttft, tpot, latency = e2e); never pooled across runs",
  'runs[].<class>_<window>_requests': 'requests of the class whose intended send time fell in the window, in that run',
  'runs[].<class>_epp_queue_mean_ms': "mean gateway queue time of the class's fairness id over the run (run.json server.windows.all)",
  'runs[].max_*, vllm_preemptions_delta, flow_control_materially_engaged':
    'copied from run.json server.windows.all (null when not scraped)',
  'runs[].agents': 'the ids of the agents that ran the run, comma-separated, in agents[] order (null for a run.json without agents)',
  'runs[].data_quality_valid': 'run.json data_quality.valid (null when the run has none)',
  ...ARM_VERDICT_DEFINITIONS,
  'runs[].slo_proof_valid': 'run.json slo_proof.valid (null when the run has none)',
};

/** The analysis document. */
export function buildAnalysis(input: AnalysisInput): AnalysisJson {
  const { experiment: e, rows } = input;
  const armNames = e.arms.map((a) => a.name);
  const arms = byArm(rows, armNames, e.compare, e.gates.repeat_spread_max);
  const keys = comparisonKeys(e.compare.metric, input.classes, input.windows);
  const cmp = comparison(arms, e.compare, keys);
  const allDq = rows.length > 0 && rows.every((r) => r.data_quality_valid === true);
  const allSlo = rows.length > 0 && rows.every((r) => r.slo_proof_valid === true);
  const words = describeMetric(e.compare.metric, input.classes, input.windows);
  const answer = answerText({
    compare: e.compare,
    metricWords: words,
    arms,
    baselineMedian: (arms[e.compare.baseline]?.[e.compare.metric] as Spread3 | undefined)?.median ?? null,
    treatmentMedian: (arms[e.compare.treatment]?.[e.compare.metric] as Spread3 | undefined)?.median ?? null,
    factor: cmp[keys.factor] as number | null,
    runCount: rows.length,
    allDataQualityValid: allDq,
    allSloProofValid: allSlo,
  });
  const runsPerArm = Math.max(0, ...Object.values(arms).map((a) => a.runs as number));
  return {
    schema: ANALYSIS_SCHEMA,
    experiment: e.name,
    business_question: e.business_question,
    answer,
    claim_boundary: e.claim_boundary ?? defaultClaimBoundary(runsPerArm, input.planName, input.target, words),
    run_count: rows.length,
    all_data_quality_valid: allDq,
    all_slo_proof_valid: allSlo,
    by_arm: arms,
    comparison: cmp,
    pareto: armPareto(arms),
    gates: gates(input, arms),
    runs: [...rows],
    definitions: { ...DEFINITIONS, ...ARM_COST_DEFINITIONS },
  };
}

// The evidence behind every gate in one place: stability per arm, and which checks kept which run invalid.
function gates(input: AnalysisInput, arms: ReturnType<typeof byArm>): Record<string, unknown> {
  const notPassing = (key: keyof RunChecks, flag: 'data_quality_valid' | 'slo_proof_valid') =>
    input.rows
      .filter((r) => r[flag] !== true)
      .map((r) => ({
        run_name: r.run_name,
        valid: r[flag],
        checks_not_passed: input.runChecks[r.run_name as string]?.[key] ?? [],
      }));
  return {
    repeat_spread_max: input.experiment.gates.repeat_spread_max,
    stability: Object.fromEntries(Object.entries(arms).map(([name, s]) => [name, { stable: s.stable, repeat_spread: s.repeat_spread }])),
    data_quality_not_valid: notPassing('data_quality', 'data_quality_valid'),
    slo_proof_not_valid: notPassing('slo_proof', 'slo_proof_valid'),
  };
}
