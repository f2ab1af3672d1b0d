// Pure: did a class meet its declared SLO, per window? The answer users look for first, kept apart
// from the SLO-proof gate (which says whether this answer can be trusted). Percentiles are exact
// nearest rank over the window's own records, so a bound met exactly is met and one request past
// the rank flips the verdict — no histogram bucket decides a verdict at its boundary.
import { formatMs, formatPct } from '../shared/format.js';
import type { LatencyMetric } from '../shared/metrics.js';
import type { Slo } from '../shared/plan.js';
import { sloTtftMetric } from '../shared/plan.js';
import type { ExactSummary } from './exact/rank-select.js';
import { exactQuantile } from './exact/rank-select.js';

/** A verdict: `not_evaluable` when the window holds nothing to judge. */
export type SloVerdictValue = 'met' | 'missed' | 'not_evaluable';

/** One declared bound against the figure that answers it. */
export interface SloCriterion {
  /** The plan's slo key: ttft_p95_ms, tpot_p95_ms, e2e_p95_ms or success_rate_min. */
  criterion: 'ttft_p95_ms' | 'tpot_p95_ms' | 'e2e_p95_ms' | 'success_rate_min';
  /** The measured p95 in ms, or the success rate in [0, 1]; null when nothing measured it. */
  figure: number | null;
  bound: number;
  /** How figure must compare with bound to meet it. */
  comparison: '<=' | '>=';
  met: boolean | null;
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
  /** missed when any window missed; met when none missed and at least one could be judged. */
  verdict: SloVerdictValue;
  /** Windows whose verdict is missed, in run.json's window order. */
  missed_in: string[];
  windows: Record<string, WindowVerdict>;
}

/** What the verdict needs of one window: counts and the exact figures of its raw values in ns (successful requests only). */
export interface VerdictWindowInput {
  requests: number;
  completed: number;
  exact: ReadonlyMap<string, ExactSummary>;
}

/** The latency bounds a class may declare, with the metric each judges. */
const LATENCY_BOUNDS: readonly { key: 'ttft_p95_ms' | 'tpot_p95_ms' | 'e2e_p95_ms'; metric: Exclude<LatencyMetric, 'itl'> }[] = [
  { key: 'ttft_p95_ms', metric: 'ttft' },
  { key: 'tpot_p95_ms', metric: 'tpot' },
  { key: 'e2e_p95_ms', metric: 'e2e' },
];

/** The exact nearest-rank p95 in ms of raw ns values; null when there are none. */
export function exactP95Ms(s: ExactSummary | undefined): number | null {
  return s ? exactQuantile(s, 0.95) / 1e6 : null;
}

/** The verdict of one window. */
export function windowVerdict(slo: Slo, w: VerdictWindowInput): WindowVerdict {
  const criteria: SloCriterion[] = [];
  for (const b of LATENCY_BOUNDS) {
    const bound = slo[b.key];
    if (bound === undefined) continue;
    const figure = exactP95Ms(w.exact.get(b.key === 'ttft_p95_ms' ? sloTtftMetric(slo.basis) : b.metric));
    // With requests but no successful one there is no latency, and nobody was served: a miss.
    criteria.push({
      criterion: b.key,
      figure,
      bound,
      comparison: '<=',
      met: figure === null ? (w.requests > 0 ? false : null) : figure <= bound,
    });
  }
  if (slo.success_rate_min !== undefined) {
    const figure = w.requests > 0 ? w.completed / w.requests : null;
    criteria.push({
      criterion: 'success_rate_min',
      figure,
      bound: slo.success_rate_min,
      comparison: '>=',
      met: figure === null ? null : figure >= slo.success_rate_min,
    });
  }
  if (w.requests === 0) return { verdict: 'not_evaluable', requests: 0, criteria, reason: 'no request of the class fell in this window' };
  if (criteria.length === 0) return { verdict: 'not_evaluable', requests: w.requests, criteria, reason: 'the SLO declares no bound' };
  const verdict = criteria.some((c) => c.met === false) ? 'missed' : 'met';
  return { verdict, requests: w.requests, criteria, reason: null };
}

/** The verdict of one class over its windows (`all` and the plan's). */
export function classVerdict(slo: Slo, windows: ReadonlyMap<string, VerdictWindowInput>): ClassVerdict {
  const out: Record<string, WindowVerdict> = {};
  for (const [name, w] of windows) out[name] = windowVerdict(slo, w);
  const all = Object.values(out);
  const missedIn = Object.entries(out)
    .filter(([, v]) => v.verdict === 'missed')
    .map(([n]) => n);
  const verdict: SloVerdictValue = missedIn.length > 0 ? 'missed' : all.some((v) => v.verdict === 'met') ? 'met' : 'not_evaluable';
  return { verdict, missed_in: missedIn, windows: out };
}

const CRITERION_WORDS: Record<SloCriterion['criterion'], string> = {
  ttft_p95_ms: 'p95 TTFT',
  tpot_p95_ms: 'p95 TPOT',
  e2e_p95_ms: 'p95 e2e',
  success_rate_min: 'success',
};

/** One criterion for people: "p95 TTFT 10,423 ms > 250 ms", "success 100% ≥ 99%". */
export function criterionText(c: SloCriterion): string {
  const show = c.criterion === 'success_rate_min' ? formatPct : formatMs;
  const op = c.met === null ? 'vs' : c.comparison === '<=' ? (c.met ? '≤' : '>') : c.met ? '≥' : '<';
  const figure = c.figure === null ? (c.criterion === 'success_rate_min' ? 'none' : 'no successful request') : show(c.figure);
  return `${CRITERION_WORDS[c.criterion]} ${figure} ${op} ${show(c.bound)}`;
}

/**
 * The class's verdict in one line, answer first: the first plan window it missed in (the whole
 * run only when no plan window missed), with that window's figures; when met, the whole run's.
 */
export function verdictLine(className: string, v: ClassVerdict): string {
  if (v.verdict === 'not_evaluable') {
    const reason = v.windows.all?.reason ?? 'nothing to judge';
    return `${className}: SLO not evaluable — ${reason}`;
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
    'met when no window missed the SLO and at least one could be judged; missed when any window (the whole run, all, included) missed it; not_evaluable when no window held a request',
  'classes.<c>.slo_verdict.missed_in': 'the windows whose verdict is missed',
  'classes.<c>.slo_verdict.windows.<w>.verdict':
    'met when every declared criterion held in the window, missed when any did not, not_evaluable when no request of the class fell in the window (by intended send time, or send time in a closed loop)',
  'classes.<c>.slo_verdict.windows.<w>.criteria[].figure':
    'for a *_p95_ms bound, the exact nearest-rank p95 in ms over the window own successful requests, every one of them (held in memory or selected from a spill file, see histograms.exact_method) (TTFT from the actual send, or from the intended send with slo.basis "intended"; it may differ from the merged-HDR *_p95_ms figures by their bucket error); for success_rate_min, completed / attempted requests (429, 5xx, timeouts and every other failure count against it); null when nothing measured it',
  'classes.<c>.slo_verdict.windows.<w>.requests': 'requests of the class in the window, every status (the success rate divides by it)',
  'classes.<c>.slo_verdict.windows.<w>.reason': 'why the window is not_evaluable; null when it was judged',
  'classes.<c>.slo_verdict.windows.<w>.criteria[].criterion':
    'the plan slo key judged: ttft_p95_ms, tpot_p95_ms, e2e_p95_ms or success_rate_min',
  'classes.<c>.slo_verdict.windows.<w>.criteria[].bound': 'the value the plan declares for that key (ms, or a share for success_rate_min)',
  'classes.<c>.slo_verdict.windows.<w>.criteria[].comparison':
    'how figure must compare with bound to meet it: <= for latency bounds, >= for success_rate_min',
  'classes.<c>.slo_verdict.windows.<w>.criteria[].met':
    'figure compared with bound as comparison says; a latency bound with requests but no successful one is not met; null when the window held no request',
};
