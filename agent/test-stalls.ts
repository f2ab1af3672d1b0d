// Test hook (agent --test-stall, hidden): stalls injected into this process's event loop, so an
// end-to-end test can prove what a client-limited verdict rests on. `<id>:<ms>/<every_ms>[@<runs>]`
// blocks the loop for `ms` every `every_ms` while agent `id` is served by this process — during its
// first `runs` runs only, when given (a stage the client limited, then clean ones).
import { performance } from 'node:perf_hooks';

/** One parsed stall spec. */
export interface StallSpec {
  agentId: string;
  ms: number;
  everyMs: number;
  /** Stall only while the agent is in one of its first `runs` runs (null: always). */
  runs: number | null;
}

/** Parses `<id>:<ms>/<every_ms>[@<runs>]`; throws on anything else. */
export function parseStallSpec(spec: string): StallSpec {
  const m = /^(.+):(\d+)\/(\d+)(?:@(\d+))?$/.exec(spec);
  if (!m || Number(m[3]) <= 0) throw new Error(`--test-stall takes <id>:<ms>/<every_ms>[@<runs>], got ${spec}`);
  return { agentId: m[1]!, ms: Number(m[2]), everyMs: Number(m[3]), runs: m[4] === undefined ? null : Number(m[4]) };
}

/** Starts one spec's stalls; returns the hook to call when the agent's next run's plan arrives. */
export function startStalls(s: StallSpec): () => void {
  let runs = 0;
  setInterval(() => {
    if (s.runs !== null && (runs === 0 || runs > s.runs)) return;
    const until = performance.now() + s.ms;
    while (performance.now() < until) {}
  }, s.everyMs).unref();
  return () => {
    runs++;
  };
}
