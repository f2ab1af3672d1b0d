// Sampled records (plan.records.sample_every = K): the agent counts every request it finishes
// (shared/record-tally.ts, by class and window, as the coordinator would from every record) and
// sends only the records whose floor(request_index / agents) mod K is 0 — every K-th request of
// its share, its first included (an agent's indices are ≡ its own residue mod the fleet size, so
// floor(index / agents) is the request's place in the agent's stripe). Every record is still
// spooled. Deterministic by index, so the same plan and fleet size sample the same requests.
import type { RequestRecord } from '../shared/metrics.js';
import { windowsAt, windowTimeNs } from '../shared/metrics.js';
import type { Plan } from '../shared/plan.js';
import type { TalliesData } from '../shared/record-tally.js';
import { RecordTally } from '../shared/record-tally.js';

/** Which records an agent sends under sampling, and its counts of all of them. */
export class RecordSample {
  private readonly byClass = new Map<string, Map<string, RecordTally>>();

  private constructor(
    private readonly plan: Plan,
    private readonly every: number,
    private readonly agents: number,
  ) {
    for (const cls of plan.classes) {
      const byWindow = new Map([['all', new RecordTally(0, Number.POSITIVE_INFINITY, cls.slo)]]);
      for (const w of plan.windows ?? []) byWindow.set(w.name, new RecordTally(w.start_s * 1e9, w.end_s * 1e9, cls.slo));
      this.byClass.set(cls.name, byWindow);
    }
  }

  /** The plan's sampling, or null when every record is sent. */
  static of(plan: Plan, agents: number): RecordSample | null {
    const r = plan.records;
    return r === undefined || r === 'all' ? null : new RecordSample(plan, r.sample_every, agents);
  }

  /** Counts `r`; returns whether its record is sent. */
  take(r: RequestRecord): boolean {
    const byWindow = this.byClass.get(r.class);
    if (byWindow) for (const w of windowsAt(this.plan.windows ?? [], windowTimeNs(r))) byWindow.get(w)?.add(r);
    return Math.floor(r.request_index / this.agents) % this.every === 0;
  }

  /** The counts so far, for `final`. */
  tallies(): TalliesData {
    const out: TalliesData = {};
    for (const [cls, byWindow] of this.byClass) out[cls] = Object.fromEntries([...byWindow].map(([w, t]) => [w, t.data()]));
    return out;
  }
}
