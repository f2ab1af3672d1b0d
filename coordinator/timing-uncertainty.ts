// TTFT timing uncertainty over a run: each successful request's first_content_uncertainty_ns (a
// bound on how long its first token's bytes waited unread before the agent stamped them,
// agent/loop-busy.ts) in small HDR histograms per agent and per class, so run.json can state a
// p99 for each and the run status can say when the client, not the server, may have shaped TTFT.
import * as hdr from 'hdr-histogram-js';
import type { Histogram } from '../shared/histogram.js';
import { nsToMs, percentilesNs, recordNs } from '../shared/histogram.js';
import { getOrCreate } from '../shared/maps.js';
import type { RequestRecord } from '../shared/metrics.js';

// 1 µs … 1 h at 2 significant digits (≤ 1%): 27 KiB per histogram instead of the 264 KiB of the
// latency configuration, since one is kept per agent; an uncertainty needs no ns resolution.
function newUncertaintyHistogram(): Histogram {
  const h = new hdr.Float64Histogram(1000, 3_600_000_000_000, 2);
  h.autoResize = false;
  return h;
}

/** Collects the uncertainties of successful requests' first-token stamps. */
export class TtftUncertainty {
  private readonly byAgent = new Map<number, Histogram>();
  private readonly byClass = new Map<string, Histogram>();

  /** One new record of agent `agent` (records of agents that do not measure it are skipped). */
  add(agent: number, r: RequestRecord): void {
    const u = r.first_content_uncertainty_ns;
    if (r.status !== 'ok' || u === null || u === undefined) return;
    recordNs(getOrCreate(this.byAgent, agent, newUncertaintyHistogram), u);
    recordNs(getOrCreate(this.byClass, r.class, newUncertaintyHistogram), u);
  }

  /** The p99 in ms of one agent's requests, or null when none carried the figure. */
  agentP99Ms(agent: number): number | null {
    return p99Ms(this.byAgent.get(agent));
  }

  /** The p99 in ms over every agent's requests of one class, or null. */
  classP99Ms(cls: string): number | null {
    return p99Ms(this.byClass.get(cls));
  }
}

function p99Ms(h: Histogram | undefined): number | null {
  if (!h || h.totalCount === 0) return null;
  return nsToMs(percentilesNs(h, [0.99])[0]!);
}
