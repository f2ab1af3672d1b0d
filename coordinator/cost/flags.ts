// The cost flags `coordinator start`, `sweep` and `experiment` share: they set the plan's `cost`
// from the command line (a price quoted today, the accelerators of the cluster at hand) without
// editing a plan kept in git. A flag replaces its part of the plan's cost and keeps the rest; the
// result is checked by the same rules as a cost written in the plan.
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { Cost } from '../../shared/cost-schema.js';
import { costRules } from '../../shared/cost-schema.js';
import { PlanInvalidError } from '../../shared/errors.js';
import type { Plan } from '../../shared/plan.js';
import { child, pathOf, rootCtx } from '../../shared/validate-kit.js';

/** The cost flags as commander parses them. */
export interface CostFlags {
  costPerHour?: number;
  costPerAcceleratorHour?: number;
  accelerators?: { type: string; count: number };
}

function usd(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 1e9) throw new InvalidArgumentError('must be a price in US dollars > 0');
  return n;
}

/** Parses `--accelerators TYPE:COUNT` (the type may itself hold colons; the count is after the last). */
export function acceleratorsFlag(value: string): { type: string; count: number } {
  const m = /^(.+):(\d+)$/.exec(value);
  const count = m ? Number(m[2]) : Number.NaN;
  if (!m || !Number.isInteger(count) || count < 1 || count > 1_000_000 || m[1]!.length > 128)
    throw new InvalidArgumentError('must be TYPE:COUNT, e.g. H100-80GB:8 (COUNT an integer from 1 to 1,000,000)');
  return { type: m[1]!, count };
}

/** Adds the cost flags to a command. */
export function addCostFlags(cmd: Command): Command {
  return cmd
    .option('--cost-per-hour <usd>', "what the whole deployment behind the target costs per hour (sets the plan's cost.usd_per_hour)", usd)
    .option(
      '--cost-per-accelerator-hour <usd>',
      "what one accelerator costs per hour, × the accelerator count (sets the plan's cost.usd_per_accelerator_hour)",
      usd,
    )
    .option(
      '--accelerators <type:count>',
      "the accelerators serving the target, e.g. H100-80GB:8 (sets the plan's cost.accelerators)",
      acceleratorsFlag,
    );
}

/** Whether any cost flag was given. */
export function hasCostFlags(f: CostFlags): boolean {
  return f.costPerHour !== undefined || f.costPerAcceleratorHour !== undefined || f.accelerators !== undefined;
}

/**
 * The plan with the flags' cost: a price flag replaces both price fields, --accelerators the
 * accelerators; the plan itself when no flag was given. Throws PlanInvalidError (the plan's
 * problem lines, `cost.…`) when the combination breaks a cost rule.
 */
export function withCostFlags(plan: Plan, f: CostFlags): Plan {
  if (!hasCostFlags(f)) return plan;
  if (f.costPerHour !== undefined && f.costPerAcceleratorHour !== undefined)
    throw new PlanInvalidError(
      ['cost: --cost-per-hour and --cost-per-accelerator-hour are two prices for one hour: give one'],
      'the cost flags',
    );
  const base: Cost = { ...plan.cost };
  if (f.costPerHour !== undefined || f.costPerAcceleratorHour !== undefined) {
    delete base.usd_per_hour;
    delete base.usd_per_accelerator_hour;
  }
  const cost: Cost = {
    ...base,
    ...(f.costPerHour !== undefined && { usd_per_hour: f.costPerHour }),
    ...(f.costPerAcceleratorHour !== undefined && { usd_per_accelerator_hour: f.costPerAcceleratorHour }),
    ...(f.accelerators && { accelerators: f.accelerators }),
  };
  const ctx = rootCtx();
  costRules(child(ctx, 'cost'), cost);
  if (ctx.problems.length > 0)
    throw new PlanInvalidError(
      ctx.problems.map((p) => `${pathOf(p.at)}: ${p.message}`),
      'the plan with the cost flags',
    );
  return { ...plan, cost };
}
