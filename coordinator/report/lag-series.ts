// Per-agent schedule lag over time from requests.ndjson: sent − intended for every open-loop
// request, grouped by agent and by the second of its intended send time, reduced to an exact
// nearest-rank p99 per second. Fed row by row, so a large requests.ndjson is never held whole.
import { nearestRank as sortedNearestRank } from '../../shared/histogram.js';
import { parseExact } from '../../shared/json.js';
import { bigOrNull, obj, strOrNull } from './fields.js';

const NS_PER_S = 1_000_000_000n;

// The leading keys of a row as coordinator/artifacts/requests-ndjson.ts writes them, in its order:
// matching them directly is ~4× faster than parsing the whole row, and anything else (another
// writer, other spacing) falls back to a full exact parse.
const ROW_HEAD =
  /^\{"agent_id":("(?:[^"\\]|\\.)*"),"class":"[A-Za-z0-9._-]*","request_index":-?\d+,"status":"[a-z_]+","http_status":(?:null|\d+),"intended_unix_ns":(null|-?\d+),"sent_unix_ns":(null|-?\d+)[,}]/;

/** The agent, intended and sent times of one requests.ndjson line (times null when absent). */
export function lagFields(line: string): { agentId: string; intendedNs: bigint | null; sentNs: bigint | null } {
  const m = ROW_HEAD.exec(line);
  if (m) {
    return {
      agentId: JSON.parse(m[1]!) as string,
      intendedNs: m[2] === 'null' ? null : BigInt(m[2]!),
      sentNs: m[3] === 'null' ? null : BigInt(m[3]!),
    };
  }
  const row = obj(parseExact(line));
  return { agentId: strOrNull(row.agent_id) ?? '?', intendedNs: bigOrNull(row.intended_unix_ns), sentNs: bigOrNull(row.sent_unix_ns) };
}

/** Collects lags and reduces them to a p99 per agent and second. */
export class LagAccumulator {
  private readonly lags = new Map<string, Map<number, number[]>>();

  /** @param runStartNs the run's start instant (run.json started_at_unix_ns), the time axis origin. */
  constructor(private readonly runStartNs: bigint) {}

  /** Adds one request; rows without an intended time (closed loop) or send time are skipped. */
  add(agentId: string, intendedNs: bigint | null | undefined, sentNs: bigint | null | undefined): void {
    if (typeof intendedNs !== 'bigint' || typeof sentNs !== 'bigint') return;
    const rel = intendedNs - this.runStartNs;
    const second = Number(rel >= 0n ? rel / NS_PER_S : (rel - NS_PER_S + 1n) / NS_PER_S);
    const byAgent = this.lags.get(agentId) ?? new Map<number, number[]>();
    this.lags.set(agentId, byAgent);
    const list = byAgent.get(second) ?? [];
    list.push(Number(sentNs - intendedNs) / 1e6);
    byAgent.set(second, list);
  }

  /** Per agent (natural order: agent-2 before agent-10), [middle of second, p99 lag ms] points. */
  p99PerSecond(): { agent: string; points: [number, number][]; requests: number }[] {
    return [...this.lags.keys()]
      .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
      .map((agent) => {
        const bySecond = this.lags.get(agent)!;
        const points = [...bySecond.entries()]
          .sort(([a], [b]) => a - b)
          .map(([s, lags]): [number, number] => [s + 0.5, nearestRank(lags, 0.99)]);
        const requests = [...bySecond.values()].reduce((n, l) => n + l.length, 0);
        return { agent, points, requests };
      });
  }
}

/** Exact nearest-rank percentile (rank ⌈q·n⌉) of unsorted values, with the product's one definition. */
export function nearestRank(values: readonly number[], q: number): number {
  return sortedNearestRank(
    [...values].sort((a, b) => a - b),
    q,
  );
}
