// Fixtures several end-to-end tests share: the sweep whose capacity follows from the simple
// engine's timing, and the two-class experiment (rt alone vs rt with bulk) on ~2 s runs.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Plan } from '../shared/plan.js';
import { writePlan } from './harness.js';

// The simple engine generates at most C requests at once (the gateway in front admits
// ⌊C·1.1⌋ = C for C = 2, so nothing else queues). A request holds its slot for
//   ttft + (output_tokens − 1) · itl + the wait for the next step of the shared 20 ms grid (itl/2 on average)
//   = 300 + 10 · 20 + 10 = 510 ms,
// so the server completes at most C / 0.51 s = 2 / 0.51 = 3.92 req/s. With constant-rate arrivals
// below that nothing waits (TTFT ≈ 300–320 ms); above it the queue grows for the whole stage, so
// p95 TTFT passes 450 ms within seconds. The capacity under that SLO is therefore 3.92 req/s.
const C = 2;
const TTFT_MS = 300;
const ITL_MS = 20;
const OUTPUT_TOKENS = 11;
export const COMPUTED_CAPACITY = C / ((TTFT_MS + (OUTPUT_TOKENS - 1) * ITL_MS + ITL_MS / 2) / 1000);
export const SIM_ARGS = [
  '--sim-arg=--engine=simple',
  `--sim-arg=--max-concurrency=${C}`,
  `--sim-arg=--ttft-ms=${TTFT_MS}`,
  `--sim-arg=--itl-ms=${ITL_MS}`,
  '--sim-arg=--prefill-us-per-token=0',
];

/** One class, constant 1 req/s for 10 s under p95 TTFT ≤ 450 ms; `target` replaces the embedded engine-sim. */
export function capacityPlan(target?: string) {
  return {
    schema: 'loadfleet.plan/v1',
    name: 'cap',
    seed: 1,
    duration_s: 10,
    drain_timeout_s: 10,
    ...(target ? { target: { base_url: target, api: 'chat', model: 'loadfleet-sim' } } : {}),
    classes: [
      {
        name: 'rt',
        prompt: { input_tokens: 10, output_tokens: OUTPUT_TOKENS },
        load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 10, rate_per_s: 1 }] },
        slo: { ttft_p95_ms: 450 },
      },
    ],
  };
}

/** Writes plan.json and sweep.json (the sweep's fields merged over the defaults) into `dir`. */
export function writeSweep(dir: string, sweep: object, target?: string): string {
  writePlan(dir, capacityPlan(target));
  const path = join(dir, 'sweep.json');
  writeFileSync(
    path,
    JSON.stringify({
      schema: 'loadfleet.sweep/v1',
      name: 'cap',
      plan: 'plan.json',
      class: 'rt',
      scale: 'rate',
      stage_duration_s: 6,
      warmup_s: 1.5,
      ...sweep,
    }),
  );
  return path;
}

/** Two classes on the embedded engine-sim, a surge window in the middle. */
export const EXPERIMENT_PLAN: Plan = {
  schema: 'loadfleet.plan/v1',
  name: 'e2e-experiment',
  seed: 3,
  duration_s: 2,
  drain_timeout_s: 5,
  classes: [
    {
      name: 'rt',
      headers: { 'x-gateway-inference-objective': 'premium', 'x-gateway-inference-fairness-id': 'rt' },
      prompt: { input_tokens: 32, output_tokens: 8 },
      load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 2, rate_per_s: 10 }] },
    },
    {
      name: 'bulk',
      prompt: { input_tokens: 64, output_tokens: 8 },
      load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 2, rate_per_s: 5 }] },
    },
  ],
  windows: [{ name: 'surge', start_s: 0.5, end_s: 1.5 }],
};

/** rt alone vs rt with bulk, 2 repeats, compared on rt's surge p95 TTFT. */
export const EXPERIMENT = {
  schema: 'loadfleet.experiment/v1',
  name: 'e2e',
  business_question: 'Does bulk traffic slow rt down?',
  plan: 'plan.json',
  repeats: 2,
  arms: [{ name: 'rt only', classes: ['rt'] }, { name: 'rt with bulk' }],
  compare: { metric: 'rt_surge_p95_ttft_ms', baseline: 'rt only', treatment: 'rt with bulk' },
};
