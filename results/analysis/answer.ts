// Pure: the plain-language `answer` and `claim_boundary` of analysis.json, in the seed's tone: one
// sentence with the two arm medians, then only the caveats that apply (invalid runs, unstable arms,
// a comparison that could not be made). Numbers are the ones in `comparison`, never recomputed.
import { CLASS_SERVER_FIGURE_SUFFIX, CLASS_WINDOW_FIGURES } from '../../shared/analysis-figures.js';
import type { Compare } from '../../shared/experiment.js';
import type { ArmSummary, RepeatSpread } from './aggregate.js';

const FIGURE_WORDS: Record<string, string> = {
  requests: 'requests',
  p95_ttft_ms: 'p95 TTFT',
  p99_ttft_ms: 'p99 TTFT',
  p95_tpot_ms: 'p95 TPOT',
  p99_tpot_ms: 'p99 TPOT',
  p95_latency_ms: 'p95 end-to-end latency',
  p99_latency_ms: 'p99 end-to-end latency',
  max_epp_queue: 'peak gateway queue length',
  max_pool_saturation: 'peak gateway pool saturation',
  max_vllm_running: 'peak vLLM running requests',
  max_vllm_waiting: 'peak vLLM waiting requests',
  max_vllm_kv_cache_usage_pct: 'peak vLLM KV cache usage',
  vllm_preemptions_delta: 'vLLM preemptions',
};

/** Words for a figure column, e.g. `realtime_surge_p95_ttft_ms` → "realtime median p95 TTFT in the surge window". */
export function describeMetric(metric: string, classes: readonly string[], windows: readonly string[]): string {
  for (const c of classes) {
    if (metric === `${c}_${CLASS_SERVER_FIGURE_SUFFIX}`) return `${c} median mean gateway queue time`;
    for (const w of [...windows, 'all']) {
      const f = CLASS_WINDOW_FIGURES.find((x) => metric === `${c}_${w}_${x.suffix}`);
      if (f) return `${c} median ${FIGURE_WORDS[f.suffix]}${w === 'all' ? ' over the whole run' : ` in the ${w} window`}`;
    }
  }
  return `median ${FIGURE_WORDS[metric] ?? metric}`;
}

/** A figure for a sentence: thousands separators, fewer decimals for larger values, and its unit. */
export function formatFigure(value: number, metric: string): string {
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  const text = value.toLocaleString('en-US', { maximumFractionDigits: digits });
  return metric.endsWith('_ms') ? `${text} ms` : metric.endsWith('_pct') ? `${text}%` : text;
}

/** What the answer needs. */
export interface AnswerInput {
  compare: Compare;
  metricWords: string;
  arms: Record<string, ArmSummary>;
  baselineMedian: number | null;
  treatmentMedian: number | null;
  factor: number | null;
  runCount: number;
  allDataQualityValid: boolean;
  allSloProofValid: boolean;
}

/** The one-paragraph answer to the business question. */
export function answerText(a: AnswerInput): string {
  const { compare, baselineMedian: b, treatmentMedian: t } = a;
  if (b === null || t === null) {
    return `No answer: ${a.metricWords} is missing for ${b === null ? `"${compare.baseline}"` : `"${compare.treatment}"`} in at least one run, so the arms cannot be compared.`;
  }
  const verb = t > b ? 'increased' : 'decreased';
  const factor = a.factor === null ? '' : ` (${a.factor}×)`;
  const words = a.metricWords.charAt(0).toUpperCase() + a.metricWords.slice(1);
  const lines = [
    t === b
      ? `At this tested load, ${a.metricWords} was ${formatFigure(b, compare.metric)} in both "${compare.baseline}" and "${compare.treatment}".`
      : `At this tested load, ${a.metricWords} ${verb} from ${formatFigure(b, compare.metric)} in "${compare.baseline}" to ${formatFigure(t, compare.metric)} in "${compare.treatment}"${factor}.`,
  ];
  if (!a.allDataQualityValid || !a.allSloProofValid) {
    lines.push(
      `Not every run passed its validity gates (${[!a.allDataQualityValid && 'data quality', !a.allSloProofValid && 'SLO proof'].filter(Boolean).join(' and ')}; see runs[] and gates), so this is indicative, not proven.`,
    );
  }
  for (const [arm, s] of Object.entries(a.arms)) {
    if (s.stable === true) continue;
    const spread = s.repeat_spread as RepeatSpread;
    lines.push(
      spread.max_over_min === null
        ? `${words} of "${arm}" could not be checked for stability across repeats (${spread.not_evaluated_reason}).`
        : `"${arm}" was not stable across repeats (max/min ${spread.max_over_min}× > ${spread.limit}×).`,
    );
  }
  return lines.join(' ');
}

/** The default claim boundary, in the seed's tone: what one experiment of this shape shows and what it does not. */
export function defaultClaimBoundary(runsPerArm: number, planName: string, target: string, metricWords: string): string {
  return (
    `This compares medians of per-run figures over ${runsPerArm} repeat${runsPerArm === 1 ? '' : 's'} per arm of one plan (${planName}) at its offered load against ${target}. ` +
    `It shows how ${metricWords} differed between the arms at that load; it does not show other loads, models, hardware or server settings, and percentiles were never pooled across repeats.`
  );
}
