// The main job's built-in plan: an open-loop realtime class and a closed-loop batch class over
// the embedded engine-sim, with a surge window, finishing in about a minute.
import type { Plan } from '../shared/plan.js';

/** `coordinator start --agents 8` with no plan runs this. */
export const DEFAULT_PLAN: Plan = {
  schema: 'loadfleet.plan/v1',
  name: 'default-realtime-plus-batch',
  seed: 42,
  duration_s: 45,
  drain_timeout_s: 15,
  classes: [
    {
      name: 'realtime',
      priority: 100,
      headers: { 'x-gateway-inference-objective': 'premium', 'x-gateway-inference-fairness-id': 'realtime-chat' },
      prompt: { input_tokens: 1024, output_tokens: 64, ignore_eos: true, cache: 'unique' },
      load: {
        model: 'poisson',
        phases: [
          { start_s: 0, duration_s: 15, rate_per_s: 8 },
          {
            start_s: 15,
            duration_s: 15,
            rate: { pattern: 'noisy-sinusoidal', center: 24, amplitude: 6, period_s: 10, noise: 1.5, spike_probability: 0.02 },
          },
          { start_s: 30, duration_s: 15, rate_per_s: 8 },
        ],
      },
      slo: { ttft_p95_ms: 250, success_rate_min: 0.99 },
    },
    {
      name: 'batch',
      priority: -10,
      headers: { 'x-gateway-inference-objective': 'batch', 'x-gateway-inference-fairness-id': 'batch-long-context' },
      prompt: { input_tokens: 8192, output_tokens: 128, ignore_eos: true, cache: 'unique' },
      load: { model: 'concurrency', phases: [{ start_s: 5, duration_s: 35, concurrency: 16 }] },
    },
  ],
  windows: [
    { name: 'baseline', start_s: 3, end_s: 14 },
    { name: 'surge', start_s: 16, end_s: 29 },
    { name: 'recovery', start_s: 31, end_s: 44 },
  ],
};
