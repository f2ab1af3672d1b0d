// The plans the benchmarks run: one class against the paced server, closed loop (concurrency)
// or open loop (constant rate), with the pacing passed to the server in the class's headers.
import type { Phase, Plan } from '../shared/plan.js';
import { pacingHeaders } from './paced-server.js';

/** Prompt length of every benchmark request: small, so bodies cost little on both sides. */
export const INPUT_TOKENS = 16;

/** What every benchmark plan needs. */
export interface PlanBase {
  name: string;
  baseUrl: string;
  durationS: number;
  tokens: number;
  gapMs: number;
  firstMs: number;
  /** Random 0…J ms the server adds to each first token (desynchronises closed-loop streams). */
  jitterMs?: number;
  /** How long in-flight requests may finish after the last phase before they are aborted. */
  drainS: number;
}

function plan(o: PlanBase, model: 'concurrency' | 'constant-rate', phases: Phase[]): Plan {
  return {
    schema: 'loadfleet.plan/v1',
    name: o.name,
    seed: 7,
    duration_s: o.durationS,
    drain_timeout_s: o.drainS,
    target: { base_url: o.baseUrl, api: 'chat', model: 'paced', timeout_s: 120, headers: pacingHeaders(o.gapMs, o.firstMs, o.jitterMs) },
    classes: [
      {
        name: 'bench',
        prompt: { input_tokens: INPUT_TOKENS, output_tokens: o.tokens, ignore_eos: true, cache: 'unique' },
        load: { model, phases },
      },
    ],
  };
}

/** Closed loop: `concurrency` streams in flight from `startS` to the end of the plan. */
export function closedLoopPlan(o: PlanBase & { concurrency: number; startS?: number }): Plan {
  const startS = o.startS ?? 0;
  return plan(o, 'concurrency', [{ start_s: startS, duration_s: o.durationS - startS, concurrency: o.concurrency }]);
}

/** Closed loop that ramps linearly to `concurrency` over `rampS`, then holds it to the end. */
export function rampedClosedLoopPlan(o: PlanBase & { concurrency: number; startS: number; rampS: number }): Plan {
  const holdStartS = o.startS + o.rampS;
  return plan(o, 'concurrency', [
    { start_s: o.startS, duration_s: o.rampS, concurrency: { pattern: 'ramp', from: 0, to: o.concurrency } },
    { start_s: holdStartS, duration_s: o.durationS - holdStartS, concurrency: o.concurrency },
  ]);
}

/** Open loop: evenly spaced arrivals at `ratePerS` for the whole plan. */
export function constantRatePlan(o: PlanBase & { ratePerS: number }): Plan {
  return plan(o, 'constant-rate', [{ start_s: 0, duration_s: o.durationS, rate_per_s: o.ratePerS }]);
}
