// Pure planning: the plan as it will run (target resolved) and each agent's share of it.
import type { Plan } from '../shared/plan.js';
import { PLAN_DEFAULTS } from '../shared/plan.js';
import type { Share } from '../shared/shares.js';

/** The plan with its target resolved: the user's, or the embedded engine-sim's. */
export function planAsRun(plan: Plan, sim: { baseUrl: string; model: string } | undefined): Plan {
  if (plan.target) return plan;
  if (!sim) throw new Error('a plan without target needs the embedded engine-sim');
  return { ...plan, target: { base_url: sim.baseUrl, api: 'chat', model: sim.model, timeout_s: PLAN_DEFAULTS.timeout_s } };
}

/** Agent `index` of `count` owns the segment (index/count, (index+1)/count]. */
export function shareFor(index: number, count: number): Share {
  return { index, count };
}

/**
 * The embedded engine-sim's flags: a plan that replays a trace or runs sessions reuses prefixes by
 * design, so the simulator caches them (as vLLM does by default) and the cache evidence can be judged.
 */
export function embeddedSimArgs(plan: Plan, args: readonly string[]): string[] {
  const reuses = plan.classes.some((c) => c.load.model === 'trace' || c.load.model === 'sessions');
  return reuses && !args.includes('--enable-prefix-caching') ? [...args, '--enable-prefix-caching'] : [...args];
}
