// The plan's `cost`: what the serving hardware behind the target costs, so run.json, sweep.json and
// analysis.json can state cost per million tokens and tokens/s per accelerator (docs/cost.md). A
// price is taken as users have it: for the whole deployment per hour, or per accelerator-hour
// (then multiplied by the accelerator count). The rules a schema cannot say are costRules below.
import { type Static, Type } from '@sinclair/typebox';
import { closed } from './schema-problems.js';
import type { Ctx, Obj } from './validate-kit.js';
import { child, report } from './validate-kit.js';

const usd = (description: string) => Type.Number({ exclusiveMinimum: 0, maximum: 1e9, description });

/** `cost` of a plan. */
export const CostSpec = closed(
  {
    usd_per_hour: Type.Optional(usd('What the whole deployment serving the target costs per hour, in US dollars.')),
    usd_per_accelerator_hour: Type.Optional(
      usd('What one accelerator costs per hour, in US dollars (× accelerators.count gives the hour); needs accelerators.'),
    ),
    accelerators: Type.Optional(
      closed(
        {
          type: Type.String({
            minLength: 1,
            maxLength: 128,
            description: 'The accelerator model, e.g. "H100-80GB" (a label, reported as given).',
          }),
          count: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'How many accelerators serve the target.' }),
        },
        { description: 'The accelerators behind the target: tokens/s per accelerator divides by count.' },
      ),
    ),
  },
  {
    description:
      'What serving the target costs: a price (usd_per_hour or usd_per_accelerator_hour) and the accelerators; gives cost per million tokens and tokens/s per accelerator in run.json.',
  },
);

/** The plan's `cost` as validated. */
export type Cost = Static<typeof CostSpec>;

/** Rules of `cost` a schema cannot say; `o` is the cost object as written. */
export function costRules(ctx: Ctx, o: Obj): void {
  const perHour = o['usd_per_hour'] !== undefined;
  const perAccelerator = o['usd_per_accelerator_hour'] !== undefined;
  if (perHour && perAccelerator) report(ctx, 'must set only one of "usd_per_hour" (the whole deployment) and "usd_per_accelerator_hour"');
  // A per-accelerator price without a count would leave the hour unknown.
  if (perAccelerator && o['accelerators'] === undefined)
    report(child(ctx, 'accelerators'), 'is required with usd_per_accelerator_hour (the hour is the price × accelerators.count)');
  if (!perHour && !perAccelerator && o['accelerators'] === undefined)
    report(ctx, 'must set usd_per_hour, usd_per_accelerator_hour or accelerators (an empty cost says nothing)');
}

/** The price of one hour of the whole deployment, or null without a price. */
export function usdPerHour(cost: Cost | undefined): number | null {
  if (!cost) return null;
  if (cost.usd_per_hour !== undefined) return cost.usd_per_hour;
  if (cost.usd_per_accelerator_hour !== undefined && cost.accelerators) return cost.usd_per_accelerator_hour * cost.accelerators.count;
  return null;
}
