// Pure: did a class meet its declared SLO, per window? The answer users look for first, kept apart
// from the SLO-proof gate (which says whether this answer can be trusted). Percentiles are exact
// nearest rank over the window's own records, so a bound met exactly is met and one request past
// the rank flips the verdict — no histogram bucket decides a verdict at its boundary.
// Two rules keep the verdict honest: a failed request ranks +∞ in every latency percentile, so 98
// rejections and 2 fast answers miss a TTFT bound, and 90 rejections beside 10 one-token answers
// miss a TPOT bound (the failures decide the p95 whatever the successes carried); and a bound is
// not_evaluable only when the requests that would decide it carry no value of the metric (TPOT
// without counted tokens), never when the failures already decide it.
import { formatMs, formatPct } from '../shared/format.js';
import type { Slo } from '../shared/plan.js';
import { sloTtftMetric } from '../shared/plan.js';
import {
  declaredBounds,
  type LatencyBound,
  latencyBoundOf,
  latencyBounds,
  type SloCriterionKey,
  SUCCESS_BOUND,
} from '../shared/slo-bounds.js';
import type { ExactSummary } from './exact/rank-select.js';
import { exactQuantile } from './exact/rank-select.js';
import { failureRank } from './failure-rank.js';

/** A verdict: `not_evaluable` when the window holds nothing to judge. */
export type SloVerdictValue = 'met' | 'missed' | 'not_evaluable';

/** One declared bound against the figure that answers it. */
export interface SloCriterion {
  /** The plan's slo key: a latency bound of the SLO table (ttft_p95_ms, …) or success_rate_min. */
  criterion: SloCriterionKey;
  /**
   * The bound's quantile (p95…) in ms over every request of the window with failures ranked +∞, or
   * the success rate in [0, 1]; null when the failures decide it (see on_failure) or it could not be judged.
   */
  figure: number | null;
  bound: number;
  /** How figure must compare with bound to meet it. */
  comparison: '<=' | '>=';
  /** null: not evaluable (see reason). */
  met: boolean | null;
  /** Latency bounds: the failures alone put the p95 on +∞ (more than 5% of the requests failed), so the bound is missed. */
  on_failure?: boolean;
  /** Latency bounds: requests ranked (measured successes + failures), failures among them, successes without the metric. */
  ranked?: number;
  failed?: number;
  unmeasured?: number;
  /** Why the criterion could not be judged (null when it was). */
  reason: string | null;
}

/** The verdict of one class in one window. */
export interface WindowVerdict {
  verdict: SloVerdictValue;
  requests: number;
  criteria: SloCriterion[];
  /** Why the window is not evaluable (null otherwise). */
  reason: string | null;
}

/** run.json's `classes.<c>.slo_verdict`. */
export interface ClassVerdict {
  /**
   * missed when any window missed; else not_evaluable when a window with requests could not be
   * judged on every bound; else met when at least one window was judged; else not_evaluable.
   */
  verdict: SloVerdictValue;
  /** Windows whose verdict is missed, in run.json's window order. */
  missed_in: string[];
  /** Windows with requests whose verdict is not_evaluable, in run.json's window order. */
  not_evaluable_in: string[];
  windows: Record<string, WindowVerdict>;
}

/** What the verdict needs of one window: counts and the exact figures of its verdict series (ns, failures as +∞). */
export interface VerdictWindowInput {
  requests: number;
  completed: number;
  failed: number;
  okWithoutFirstToken: number;
  okUncountedOutput: number;
  okOneToken: number;
  verdictExact: ReadonlyMap<string, ExactSummary>;
}

/** The exact nearest-rank p95 in ms of raw ns values; null when there are none. */
export function exactP95Ms(s: ExactSummary | undefined): number | null {
  return exactQuantileMs(s, 0.95);
}

/** The exact nearest-rank q-quantile in ms of raw ns values; null when there are none. */
export function exactQuantileMs(s: ExactSummary | undefined, q: number): number | null {
  return s ? exactQuantile(s, q) / 1e6 : null;
}

/** The series a bound ranks: TTFT on the SLO's basis, TPOT or e2e. */
export function boundSeries(row: LatencyBound, slo: Slo): string {
  return row.metric === 'ttft' ? sloTtftMetric(slo.basis) : row.metric;
}

/** Successful requests without the metric, and why they carry none (the not_evaluable reason). */
function unmeasured(row: LatencyBound, w: VerdictWindowInput): { n: number; why: string } {
  if (row.metric === 'tpot') {
    const n = w.okUncountedOutput + w.okOneToken;
    const parts = [
      w.okUncountedOutput > 0 ? `${w.okUncountedOutput} without counted output tokens (no usage and no tokenizer: chunk estimates)` : '',
      w.okOneToken > 0 ? `${w.okOneToken} with a 1-token output (no gap between tokens)` : '',
    ].filter(Boolean);
    return { n, why: `TPOT needs 2 or more counted output tokens; of ${w.completed} successful requests, ${parts.join(' and ')}` };
  }
  if (row.metric === 'ttft')
    return {
      n: w.okWithoutFirstToken,
      why:
        w.okWithoutFirstToken === w.completed
          ? `no successful request had a first content token (${w.okWithoutFirstToken} of ${w.completed} without one)`
          : `${w.okWithoutFirstToken} of ${w.completed} successful requests had no first content token`,
    };
  return { n: 0, why: 'no successful request had an end time' };
}

/** One latency bound: the nearest-rank quantile over every request, failures ranked +∞ (failure-rank.ts). */
function latencyCriterion(row: LatencyBound, bound: number, slo: Slo, w: VerdictWindowInput): SloCriterion {
  const s = w.verdictExact.get(boundSeries(row, slo));
  const ranked = s?.count ?? 0;
  const base = { criterion: row.key as SloCriterionKey, bound, comparison: '<=' as const };
  const um = unmeasured(row, w);
  const counts = { ranked, failed: w.failed, unmeasured: um.n };
  const at = failureRank({ requests: w.requests, failed: w.failed, measured: ranked - w.failed }, row.quantile);
  if (at.kind === 'empty') return { ...base, figure: null, met: null, reason: 'no request of the class fell in this window' };
  // More than 5% of every request failed: the p95 is +∞ whatever the successes carried, measured or not.
  if (at.kind === 'failures_decide') return { ...base, figure: null, met: false, on_failure: true, ...counts, reason: null };
  // The successes without the metric decide it: a bound that cannot be measured is never missed.
  if (at.kind === 'unmeasured_decide')
    return { ...base, figure: null, met: null, on_failure: false, ...counts, reason: openReason(um.why, w) };
  const figure = exactQuantileMs(s, row.quantile)!;
  return { ...base, figure, met: figure <= bound, on_failure: false, ...counts, reason: null };
}

// Why the unmeasured successes, not the failures, decide a bound.
function openReason(why: string, w: VerdictWindowInput): string {
  if (w.failed === 0) return why;
  return `${why}; the ${w.failed} failed of ${w.requests} requests (ranked +∞) are too few to put the p95 on a failure whatever those successes carried`;
}

/** The verdict of one window. */
export function windowVerdict(slo: Slo, w: VerdictWindowInput): WindowVerdict {
  const criteria: SloCriterion[] = [];
  for (const { row, bound } of declaredBounds(slo)) criteria.push(latencyCriterion(row, bound, slo, w));
  if (slo.success_rate_min !== undefined) {
    const figure = w.requests > 0 ? w.completed / w.requests : null;
    criteria.push({
      criterion: SUCCESS_BOUND.key,
      figure,
      bound: slo.success_rate_min,
      comparison: '>=',
      met: figure === null ? null : figure >= slo.success_rate_min,
      reason: figure === null ? 'no request of the class fell in this window' : null,
    });
  }
  if (w.requests === 0) return { verdict: 'not_evaluable', requests: 0, criteria, reason: 'no request of the class fell in this window' };
  if (criteria.length === 0) return { verdict: 'not_evaluable', requests: w.requests, criteria, reason: 'the SLO declares no bound' };
  if (criteria.some((c) => c.met === false)) return { verdict: 'missed', requests: w.requests, criteria, reason: null };
  const open = criteria.filter((c) => c.met === null);
  if (open.length > 0)
    return {
      verdict: 'not_evaluable',
      requests: w.requests,
      criteria,
      reason: open.map((c) => `${criterionWords(c.criterion)}: ${c.reason}`).join('; '),
    };
  return { verdict: 'met', requests: w.requests, criteria, reason: null };
}

/** The verdict of one class over its windows (`all` and the plan's). */
export function classVerdict(slo: Slo, windows: ReadonlyMap<string, VerdictWindowInput>): ClassVerdict {
  const out: Record<string, WindowVerdict> = {};
  for (const [name, w] of windows) out[name] = windowVerdict(slo, w);
  const entries = Object.entries(out);
  const missedIn = entries.filter(([, v]) => v.verdict === 'missed').map(([n]) => n);
  // A window without requests judges nothing and decides nothing; one with requests that could not be judged does.
  const openIn = entries.filter(([, v]) => v.verdict === 'not_evaluable' && v.requests > 0).map(([n]) => n);
  const verdict: SloVerdictValue =
    missedIn.length > 0
      ? 'missed'
      : openIn.length > 0
        ? 'not_evaluable'
        : entries.some(([, v]) => v.verdict === 'met')
          ? 'met'
          : 'not_evaluable';
  return { verdict, missed_in: missedIn, not_evaluable_in: openIn, windows: out };
}

// A criterion in words: the table's, for a key of a table this build does not have its own key.
function criterionWords(key: string): string {
  return key === SUCCESS_BOUND.key ? SUCCESS_BOUND.words : (latencyBoundOf(key)?.words ?? key);
}

/** One criterion for people: "p95 TTFT 10,423 ms > 250 ms", "success 100% ≥ 99%". */
export function criterionText(c: SloCriterion): string {
  const show = c.criterion === SUCCESS_BOUND.key ? formatPct : formatMs;
  if (c.met === null) return `${criterionWords(c.criterion)} not evaluable vs ${show(c.bound)}`;
  const op = c.comparison === '<=' ? (c.met ? '≤' : '>') : c.met ? '≥' : '<';
  const figure = c.on_failure
    ? `a failed request (${c.failed} of ${(c.ranked ?? 0) + (c.unmeasured ?? 0)} failed)`
    : c.figure === null
      ? 'none'
      : show(c.figure);
  return `${criterionWords(c.criterion)} ${figure} ${op} ${show(c.bound)}`;
}

/**
 * The class's verdict in one line, answer first: the first plan window it missed in (the whole
 * run only when no plan window missed), with that window's figures; when met, the whole run's.
 */
export function verdictLine(className: string, v: ClassVerdict): string {
  if (v.verdict === 'not_evaluable') {
    const open = v.not_evaluable_in ?? []; // absent in run.json written by earlier builds
    const shown = open.includes('all') ? 'all' : open[0];
    const w = shown === undefined ? v.windows.all : v.windows[shown];
    const where = shown === undefined || shown === 'all' ? '' : ` in ${shown}`;
    return `${className}: SLO not evaluable${where} — ${w?.reason ?? 'nothing to judge'}`;
  }
  if (v.verdict === 'met') {
    const w = v.windows.all ?? Object.values(v.windows).find((x) => x.verdict === 'met')!;
    return `${className}: SLO met in every window — ${w.criteria.map(criterionText).join('; ')} (whole run)`;
  }
  const planMissed = v.missed_in.filter((n) => n !== 'all');
  const shown = planMissed[0] ?? 'all';
  const others = v.missed_in.filter((n) => n !== shown);
  const where = shown === 'all' ? 'over the whole run' : `in ${shown}`;
  const also = others.length > 0 ? ` (also ${others.map((n) => (n === 'all' ? 'the whole run' : n)).join(', ')})` : '';
  return `${className}: SLO MISSED ${where}${also} — ${v.windows[shown]!.criteria.map(criterionText).join('; ')}`;
}

/** One sentence per figure of slo_verdict, for run.json's definitions. */
export const SLO_VERDICT_DEFINITIONS: Record<string, string> = {
  'classes.<c>.slo_verdict.verdict':
    "missed when any window (the whole run, all, included) missed the SLO; otherwise not_evaluable when a window with requests could not be judged on every bound (see not_evaluable_in and the window reason); otherwise met when at least one window was judged; not_evaluable when no window held a request. A failed request never meets a latency bound (it ranks +∞): when more than 5% of a window's requests failed, every p95 bound of that window is missed whatever the successes carried; a bound is not_evaluable only when the successes that would decide it carry no value of the metric",
  'classes.<c>.slo_verdict.missed_in': 'the windows whose verdict is missed',
  'classes.<c>.slo_verdict.not_evaluable_in':
    'the windows holding requests whose verdict is not_evaluable (a window with no request of the class judges nothing and is not listed)',
  'classes.<c>.slo_verdict.windows.<w>.verdict':
    'missed when any declared criterion was not met; otherwise not_evaluable when a criterion could not be judged (its reason says why) or no request of the class fell in the window (by intended send time, or send time in a closed loop); otherwise met',
  'classes.<c>.slo_verdict.windows.<w>.criteria[].figure':
    'for a *_p95_ms bound, the exact nearest-rank p95 in ms over every request of the window with each failed request (429, 5xx, timeout, any status but ok) ranked +∞ and successful requests without the metric left out (see unmeasured), every value held in memory or selected from a spill file (histograms.exact_method); TTFT from the actual send, or from the intended send with slo.basis "intended"; it differs from the successful-only *_p95_ms figures of the window when requests failed; null when the failures decide the p95 (on_failure) or the bound is not evaluable. For success_rate_min, completed / attempted requests; null without requests',
  'classes.<c>.slo_verdict.windows.<w>.criteria[].on_failure':
    "latency bounds: true when the failed requests alone put the p95 on +∞ whatever every other request carried, measured or not: more than requests − ceil(0.95 × requests) of the window's requests failed (more than 5%), so the bound is missed",
  'classes.<c>.slo_verdict.windows.<w>.criteria[].ranked':
    'latency bounds: requests ranked for the p95: successful requests carrying the metric plus failed requests',
  'classes.<c>.slo_verdict.windows.<w>.criteria[].failed': 'latency bounds: failed requests among ranked, each ranked +∞',
  'classes.<c>.slo_verdict.windows.<w>.criteria[].unmeasured':
    'latency bounds: successful requests without the metric (TPOT: an output without 2 or more counted tokens, usage or tokenizer; TTFT: no content token), left out of the ranking',
  'classes.<c>.slo_verdict.windows.<w>.criteria[].reason':
    'why the criterion is not evaluable (null when judged): no request in the window, or successful requests without the metric (no counted output tokens, 1-token outputs, no first token) that decide the p95: none of the successes carried it, or the p95 of the ranked requests falls on a failure while the failures, 5% or fewer of every request, do not decide it; a bound that cannot be measured is never missed, and it is never not_evaluable when the failures decide it',
  'classes.<c>.slo_verdict.windows.<w>.requests': 'requests of the class in the window, every status (the success rate divides by it)',
  'classes.<c>.slo_verdict.windows.<w>.reason':
    'why the window is not_evaluable, each open criterion with its reason; null when it was judged',
  'classes.<c>.slo_verdict.windows.<w>.criteria[].criterion': `the plan slo key judged: ${latencyBounds()
    .map((b) => b.key)
    .join(', ')} or success_rate_min`,
  'classes.<c>.slo_verdict.windows.<w>.criteria[].bound': 'the value the plan declares for that key (ms, or a share for success_rate_min)',
  'classes.<c>.slo_verdict.windows.<w>.criteria[].comparison':
    'how figure must compare with bound to meet it: <= for latency bounds, >= for success_rate_min',
  'classes.<c>.slo_verdict.windows.<w>.criteria[].met':
    'figure compared with bound as comparison says; false when the failures decide the p95 (on_failure); null when the criterion is not evaluable (see reason)',
};
