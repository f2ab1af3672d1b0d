// Per-agent schedule lag over time from requests.ndjson: sent − intended for every open-loop
// request, grouped by agent and by the second of its intended send time, reduced to an exact
// nearest-rank p99 per second. Fed row by row, so a large requests.ndjson is never held whole; the
// lags are held in bounded memory (grouped-values.ts).
import { nearestRank as sortedNearestRank } from '../../shared/histogram.js';
import { parseExact } from '../../shared/json.js';
import { getOrCreate } from '../../shared/maps.js';
import { bigOrNull, obj, strOrNull } from './fields.js';
import { GroupedValues } from './grouped-values.js';

const NS_PER_S = 1_000_000_000n;

// The leading keys of a row as coordinator/file-writers/requests-ndjson.ts writes them, in its order:
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
  /** Agent id → its key in `lags`. */
  private readonly agents = new Map<string, number>();
  private readonly lags: GroupedValues;

  /**
   * @param runStartNs the run's start instant (run.json started_at_unix_ns), the time axis origin.
   * @param maxInMemory lags held in memory before they spill (grouped-values.ts).
   */
  constructor(
    private readonly runStartNs: bigint,
    maxInMemory?: number,
  ) {
    this.lags = new GroupedValues(maxInMemory);
  }

  /** Adds one request; rows without an intended time (closed loop) or send time are skipped. */
  add(agentId: string, intendedNs: bigint | null | undefined, sentNs: bigint | null | undefined): void {
    if (typeof intendedNs !== 'bigint' || typeof sentNs !== 'bigint') return;
    const rel = intendedNs - this.runStartNs;
    const second = Number(rel >= 0n ? rel / NS_PER_S : (rel - NS_PER_S + 1n) / NS_PER_S);
    const key = getOrCreate(this.agents, agentId, () => this.agents.size);
    this.lags.add(key, second, Number(sentNs - intendedNs) / 1e6);
  }

  /** Per agent (natural order: agent-2 before agent-10), [middle of second, p99 lag ms] points. Call once. */
  p99PerSecond(): { agent: string; points: [number, number][]; requests: number }[] {
    const byKey = [...this.agents.keys()].map((agent) => ({ agent, points: [] as [number, number][], requests: 0 }));
    this.lags.forEachGroup((key, second, sorted) => {
      byKey[key]!.points.push([second + 0.5, sortedNearestRank(sorted, 0.99)]);
      byKey[key]!.requests += sorted.length;
    });
    for (const a of byKey) a.points.sort(([x], [y]) => x - y);
    return byKey.sort((a, b) => a.agent.localeCompare(b.agent, 'en', { numeric: true }));
  }
}

/** Exact nearest-rank percentile (rank ⌈q·n⌉) of unsorted values, with the product's one definition. */
export function nearestRank(values: readonly number[], q: number): number {
  return sortedNearestRank(
    [...values].sort((a, b) => a - b),
    q,
  );
}
