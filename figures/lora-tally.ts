// Per-adapter figures of a class with LoRA adapters (class.adapters): how many requests named each
// model, how many the schedule gave it, their outcomes and mean latencies, exact over every record.
// Pure; the collector feeds it.
import type { LoraWeight } from '../shared/lora.js';
import type { RequestRecord } from '../shared/metrics.js';
import { metricNs } from '../shared/metrics.js';

interface Tally {
  requests: number;
  completed: number;
  failed: number;
  ttftSumNs: number;
  ttftCount: number;
  e2eSumNs: number;
}

/** One sentence per field of classes.<c>.adapters.<model>. */
export const LORA_DEFINITIONS: Record<string, string> = {
  'classes.<c>.adapters':
    'a class with LoRA adapters (class.adapters): per model name, its weight, the requests the schedule assigned it (scheduled, open loop; null in a closed loop), the requests that named it (requests), completed, failed, and the exact mean ttft and e2e of its successful requests in ms (null without one)',
};

/** The tally of one class. */
export class LoraTally {
  private readonly byModel = new Map<string, Tally>();

  constructor(
    private readonly adapters: readonly LoraWeight[],
    /** Requests the schedule assigned each adapter (open loop), or null. */
    private readonly scheduled: readonly number[] | null,
  ) {
    for (const a of adapters) this.byModel.set(a.model, { requests: 0, completed: 0, failed: 0, ttftSumNs: 0, ttftCount: 0, e2eSumNs: 0 });
  }

  add(r: RequestRecord): void {
    const t = r.model === undefined ? undefined : this.byModel.get(r.model);
    if (!t) return;
    t.requests++;
    if (r.status !== 'ok') {
      t.failed++;
      return;
    }
    t.completed++;
    const ttft = metricNs(r, 'ttft');
    if (ttft !== null) {
      t.ttftSumNs += ttft;
      t.ttftCount++;
    }
    t.e2eSumNs += metricNs(r, 'e2e') ?? 0;
  }

  /** classes.<c>.adapters. */
  summary(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.adapters.forEach((a, i) => {
      const t = this.byModel.get(a.model)!;
      out[a.model] = {
        weight: a.weight,
        scheduled: this.scheduled ? this.scheduled[i]! : null,
        requests: t.requests,
        completed: t.completed,
        failed: t.failed,
        ttft_mean_ms: t.ttftCount > 0 ? round3(t.ttftSumNs / t.ttftCount / 1e6) : null,
        e2e_mean_ms: t.completed > 0 ? round3(t.e2eSumNs / t.completed / 1e6) : null,
      };
    });
    return out;
  }
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
