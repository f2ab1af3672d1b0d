// run.json's `cost` section: the budget figures (figures.ts) of every class and of all classes
// together, in every window the run reports, from the collector's exact counts and merged
// histograms — the same counts and windows as throughput_tok_s, so the two always agree.

import type { TokenCounts } from '../../figures/cost/figures.js';
import { costBasis, nullReasons, TOKEN_FIGURE_DEFINITIONS, tokenFigures } from '../../figures/cost/figures.js';
import type { Histogram } from '../../shared/histogram.js';
import { mergeInto, newHistogram, summarizeMs } from '../../shared/histogram.js';
import type { Plan } from '../../shared/plan.js';
import type { Collector } from '../collector.js';

/** The window name that always means the whole run. */
const ALL = 'all';

/** What the section reads of the collector: per class and window, the tally and the merged TPOT histogram. */
export type CostSource = Pick<Collector, 'stats' | 'mergedHistogram'>;

/** The `cost` section of run.json. */
export function costSection(plan: Plan, c: CostSource, runSeconds: number): Record<string, unknown> {
  const basis = costBasis(plan.cost);
  const windows: Record<string, unknown> = {};
  for (const w of [ALL, ...(plan.windows ?? []).map((x) => x.name)]) {
    const def = plan.windows?.find((x) => x.name === w);
    const lengthS = def ? def.end_s - def.start_s : runSeconds;
    const classes: Record<string, unknown> = {};
    const pooled = newHistogram();
    const total: TokenCounts = { completed: 0, outputTokens: 0, inputTokens: 0, tpotP50Ms: null };
    for (const cls of plan.classes) {
      const s = c.stats.get(cls.name)?.get(w);
      if (!s) continue;
      const tpot: Histogram = c.mergedHistogram(cls.name, w, 'tpot');
      mergeInto(pooled, tpot);
      const counts = {
        completed: s.completed,
        outputTokens: s.completionTokens,
        inputTokens: s.promptTokens,
        tpotP50Ms: summarizeMs(tpot).p50_ms,
      };
      classes[cls.name] = tokenFigures(counts, lengthS, basis);
      total.completed += counts.completed;
      total.outputTokens += counts.outputTokens;
      total.inputTokens += counts.inputTokens;
    }
    total.tpotP50Ms = summarizeMs(pooled).p50_ms;
    windows[w] = { length_s: lengthS, total: tokenFigures(total, lengthS, basis), classes };
  }
  return {
    usd_per_hour: basis.usdPerHour,
    price_basis:
      plan.cost?.usd_per_hour !== undefined
        ? 'usd_per_hour'
        : plan.cost?.usd_per_accelerator_hour !== undefined
          ? 'usd_per_accelerator_hour × accelerators.count'
          : null,
    accelerators: basis.accelerators,
    null_reasons: nullReasons(plan.cost),
    windows,
  };
}

/** run.json field definitions of the section (keys as in field_definitions). */
export const COST_DEFINITIONS: Record<string, string> = {
  cost: "the budget figures of every window the run reports (all, and the plan's windows), for all classes together (total) and per class; every figure counts only successful requests",
  'cost.usd_per_hour':
    'the price of one hour of the whole deployment behind the target, US dollars: plan cost.usd_per_hour, or cost.usd_per_accelerator_hour × cost.accelerators.count (null: no price given)',
  'cost.price_basis': 'which of the two the price came from',
  'cost.accelerators': 'the accelerator type and count given (plan cost.accelerators or --accelerators); null when none was',
  'cost.null_reasons': 'why the dollar figures or the per-accelerator figures are null throughout, when they are (null: computed)',
  'cost.windows.<w>.length_s':
    'the window length in seconds the rates divide by (window all: the whole run, drain included), as for throughput_tok_s',
  'cost.windows.<w>.total':
    "the figures of every class's requests together: the hardware produced all of them in the hour (per user: the p50 TPOT of every class's requests pooled)",
  'cost.windows.<w>.classes.<c>':
    "one class's figures; its dollar figures charge the whole hour to that class's tokens (what the hour would buy if it served this class alone at this rate), so they equal the total's only when the class is the only one",
  ...Object.fromEntries(Object.entries(TOKEN_FIGURE_DEFINITIONS).map(([k, v]) => [`cost.windows.<w>.total.${k}`, v])),
};
