// Pure: the plan's abort rules (k6's abortOnFail, GuideLLM's over-saturation stop) watched while a
// run goes on. Each second the coordinator asks: has a class, over the requests that ended in the
// last window_s, failed more than error_share_above, or had a p95 beyond p95_over_slo × a latency
// bound of its SLO (failed requests ranked +∞, as the SLO verdict ranks them), at every check for
// for_s seconds? Then the run stops, aborted, with the rule.

import type { Static } from '@sinclair/typebox';
import { failureRank } from '../figures/failure-rank.js';
import type { VerdictMetric } from '../figures/window-stats.js';
import { boundedMetrics } from '../figures/window-stats.js';
import type { RequestRecord } from '../shared/metrics.js';
import { metricNs } from '../shared/metrics.js';
import type { Plan, Slo } from '../shared/plan.js';
import type { AbortRules } from '../shared/plan-schema.js';
import { declaredBounds } from '../shared/slo-bounds.js';

export type AbortRulesSpec = Static<typeof AbortRules>;

/** Every abort reason starts with this, so readers (sweeps) can tell a rule from other aborts. */
export const ABORT_RULE_PREFIX = 'abort rule';

// The bound a metric's rolling p95 is multiplied from: its p95 row of the SLO table when the class
// declares it, else the first row of that metric it declares (a table may bound other quantiles).
function boundFor(slo: Slo, m: VerdictMetric): number {
  const rows = declaredBounds(slo).filter((b) =>
    b.row.metric === 'ttft' ? m === 'ttft' || m === 'ttft_from_intended' : b.row.metric === m,
  );
  return (rows.find((b) => b.row.quantile === 0.95) ?? rows[0])!.bound;
}

interface Ended {
  atNs: number;
  ok: boolean;
  values: (number | null)[];
}

/** Watches one run's records against its abort rules. */
export class AbortWatch {
  private readonly ended = new Map<string, Ended[]>();
  private readonly metrics = new Map<string, VerdictMetric[]>();
  /** Per class and limit, since when (run ns) it has been exceeded at every check. */
  private readonly since = new Map<string, number>();
  private readonly windowNs: number;
  private readonly minRequests: number;

  constructor(
    private readonly rules: AbortRulesSpec,
    private readonly plan: Pick<Plan, 'classes'>,
  ) {
    this.windowNs = (rules.window_s ?? 5) * 1e9;
    this.minRequests = rules.min_requests ?? 10;
    for (const c of plan.classes) {
      this.ended.set(c.name, []);
      this.metrics.set(c.name, c.slo ? boundedMetrics(c.slo) : []);
    }
  }

  /** Records as they arrive (any order); each counts at its end time (its send time when it never ended). */
  add(rows: readonly RequestRecord[]): void {
    for (const r of rows) {
      const list = this.ended.get(r.class);
      if (!list) continue;
      const ms = this.metrics.get(r.class)!;
      list.push({
        atNs: r.done_ns ?? r.sent_ns,
        ok: r.status === 'ok',
        values: ms.map((m) => (r.status === 'ok' ? metricNs(r, m) : null)),
      });
    }
  }

  /** At run time nowNs: the reason to stop, or null. Call about once a second. */
  check(nowNs: number): string | null {
    const from = nowNs - this.windowNs;
    for (const c of this.plan.classes) {
      const list = this.ended.get(c.name)!;
      // Old records leave the window for good: keep the list to what the next checks can see.
      const recent = list.filter((e) => e.atNs > from - this.windowNs);
      this.ended.set(c.name, recent);
      const inWindow = recent.filter((e) => e.atNs > from && e.atNs <= nowNs);
      for (const limit of this.limits(c.name, c.slo, inWindow)) {
        const key = `${c.name}\u0000${limit.name}`;
        if (!limit.exceeded) {
          this.since.delete(key);
          continue;
        }
        const since = this.since.get(key) ?? nowNs;
        this.since.set(key, since);
        if (nowNs - since >= this.rules.for_s * 1e9)
          return `${ABORT_RULE_PREFIX} abort.${limit.rule}: class ${c.name} ${limit.text} for ${this.rules.for_s} s (window ${this.windowNs / 1e9} s)`;
      }
    }
    return null;
  }

  private limits(
    cls: string,
    slo: Plan['classes'][number]['slo'],
    inWindow: Ended[],
  ): { name: string; rule: string; exceeded: boolean; text: string }[] {
    const out: { name: string; rule: string; exceeded: boolean; text: string }[] = [];
    const enough = inWindow.length >= this.minRequests;
    if (this.rules.error_share_above !== undefined) {
      const failed = inWindow.filter((e) => !e.ok).length;
      const share = inWindow.length > 0 ? failed / inWindow.length : 0;
      out.push({
        name: 'errors',
        rule: 'error_share_above',
        exceeded: enough && share > this.rules.error_share_above,
        text: `failed ${failed} of ${inWindow.length} requests (${(share * 100).toFixed(1)}% > ${this.rules.error_share_above * 100}%)`,
      });
    }
    const multiple = this.rules.p95_over_slo;
    if (multiple !== undefined && slo) {
      const failed = inWindow.filter((e) => !e.ok).length;
      this.metrics.get(cls)!.forEach((m, i) => {
        const bound = boundFor(slo, m);
        const limit = multiple * bound;
        const values = Float64Array.from(
          inWindow.flatMap((e) => (e.values[i] === null || e.values[i] === undefined ? [] : [e.values[i]! / 1e6])),
        ).sort();
        // A failed request ranks +∞, as in the SLO verdict: more than 5% failed puts the p95 past any multiple.
        const at = failureRank({ requests: inWindow.length, failed, measured: values.length });
        const p95 = at.kind === 'measured' ? values[at.rank - 1]! : null;
        const exceeded = enough && (at.kind === 'failures_decide' || (p95 !== null && p95 > limit));
        const figure =
          at.kind === 'failures_decide'
            ? `a failed request (${failed} of ${inWindow.length} failed, ranked +∞)`
            : p95 === null
              ? '–'
              : `${p95.toFixed(1)} ms`;
        out.push({ name: m, rule: 'p95_over_slo', exceeded, text: `rolling p95 ${m} ${figure} > ${multiple} × its bound ${bound} ms` });
      });
    }
    return out;
  }
}
