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
 * design, so the simulator caches them (as vLLM does by default) and the cache evidence can be
 * judged; a plan naming LoRA adapters gets them served (every adapter the classes name), since a
 * server without them would only answer 404; a plan with `traces` gets its spans sent to the run's
 * receiver (`tracesEndpoint`, OTLP/HTTP). A user's own flag of any kind wins.
 */
export function embeddedSimArgs(plan: Plan, args: readonly string[], tracesEndpoint?: string): string[] {
  const out = [...args];
  const has = (flag: string): boolean => args.some((a) => a === flag || a.startsWith(`${flag}=`));
  const reuses = plan.classes.some((c) => c.load.model === 'trace' || c.load.model === 'sessions');
  if (reuses && !has('--enable-prefix-caching')) out.push('--enable-prefix-caching');
  const adapters = [...new Set(plan.classes.flatMap((c) => (c.adapters ?? []).map((a) => a.model)))];
  if (adapters.length > 0 && !has('--lora-modules')) out.push('--lora-modules', adapters.join(','));
  if (plan.traces && tracesEndpoint && !has('--otlp-traces-endpoint')) out.push('--otlp-traces-endpoint', tracesEndpoint);
  return out;
}
