// Known inputs for the live view's unit tests: a two-class plan, histograms of given values,
// request records.
import type { Histogram } from '../shared/histogram.js';
import { newHistogram, recordNs } from '../shared/histogram.js';
import type { RequestRecord } from '../shared/metrics.js';
import { blankRecord } from '../shared/metrics.js';
import type { Plan } from '../shared/plan.js';

/** 10 req/s open loop for 30 s, and 4 in flight closed loop for the first 20 s. */
export const PLAN: Plan = {
  schema: 'loadfleet.plan/v1',
  name: 'live-unit',
  seed: 1,
  duration_s: 30,
  classes: [
    {
      name: 'rt',
      prompt: { input_tokens: 16, output_tokens: 8 },
      load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 30, rate_per_s: 10 }] },
    },
    {
      name: 'batch',
      prompt: { input_tokens: 16, output_tokens: 8 },
      load: { model: 'concurrency', phases: [{ start_s: 0, duration_s: 20, concurrency: 4 }] },
    },
  ],
};

/** A histogram holding `valuesMs` (as ns). */
export function hist(...valuesMs: number[]): Histogram {
  const h = newHistogram();
  for (const v of valuesMs) recordNs(h, v * 1e6);
  return h;
}

/** A record with only the fields the live state reads filled in meaningfully. */
export function record(cls: string, status: RequestRecord['status'], httpStatus: number | null, index: number): RequestRecord {
  return { ...blankRecord(cls, index, null), status, http_status: httpStatus };
}
