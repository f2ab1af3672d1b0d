// Pure: which endpoints a run scrapes — the plan's `scrape` list, or, when the plan has neither a
// target nor a scrape list, the embedded engine-sim's engine and gateway metrics apart.
import type { Plan, ScrapeTarget } from '../../shared/plan.js';

/** How often the embedded engine-sim is scraped (domain.md §4: every 0.5–1 s). */
export const EMBEDDED_SCRAPE_INTERVAL_S = 0.5;

/** Where the embedded engine-sim serves its metrics. */
export interface SimMetricsUrls {
  metricsUrl: string;
  vllmMetricsUrl?: string;
  eppMetricsUrl?: string;
}

/** The sources to scrape. */
export function scrapeTargets(plan: Plan, sim: SimMetricsUrls | undefined): ScrapeTarget[] {
  if (plan.scrape && plan.scrape.length > 0) return plan.scrape;
  if (plan.target || !sim) return [];
  const interval_s = EMBEDDED_SCRAPE_INTERVAL_S;
  // Without a gateway the whole /metrics is the engine's; with one, the engine and gateway apart.
  const out: ScrapeTarget[] = [{ name: 'vllm', url: sim.vllmMetricsUrl ?? sim.metricsUrl, interval_s }];
  if (sim.eppMetricsUrl) out.push({ name: 'epp', url: sim.eppMetricsUrl, interval_s });
  return out;
}
