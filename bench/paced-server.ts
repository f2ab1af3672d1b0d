// The benchmark's side of the paced SSE server: start it as a child process, read its counters
// and its ground truth over HTTP, stop it.
import { parseExact } from '../shared/json.js';
import type { Child } from './spawn.js';
import { startNode } from './spawn.js';

/** The server's counters (GET /stats). */
export interface PacedStats {
  /** TCP connections accepted since start. */
  connections: number;
  requests: number;
  completed: number;
  cut: number;
  tokens_written: number;
  active: number;
  max_active: number;
}

/** One request's ground truth: arrival and first-token write on the server's anchored wall clock. */
export interface TruthRow {
  id: string;
  arrival_unix_ns: bigint;
  first_token_unix_ns: bigint | null;
}

/** A running paced server. */
export interface PacedServer {
  baseUrl: string;
  pid: number;
  stats(): Promise<PacedStats>;
  /** Returns the truth rows recorded since the last call, and forgets them. */
  takeTruth(): Promise<Map<string, TruthRow>>;
  stop(): Promise<void>;
}

/** Starts the paced server with default gaps (each request may override them by header). */
export async function startPacedServer(gapMs = 20, firstMs = 20): Promise<PacedServer> {
  const child: Child = startNode('bench/paced-sse-server.js', ['--gap-ms', String(gapMs), '--first-ms', String(firstMs)]);
  const { base_url } = JSON.parse(await child.firstLine) as { base_url: string };
  const origin = new URL(base_url).origin;
  return {
    baseUrl: base_url,
    pid: child.pid,
    stats: async () => (await (await fetch(`${origin}/stats`)).json()) as PacedStats,
    takeTruth: async () => {
      const text = await (await fetch(`${origin}/truth`)).text();
      const rows = new Map<string, TruthRow>();
      for (const line of text.split('\n')) {
        if (!line) continue;
        const row = parseExact<TruthRow>(line);
        rows.set(row.id, row);
      }
      return rows;
    },
    stop: () => child.stop(),
  };
}

/** Headers that set the server's pacing for one request (jitter: a random 0…J ms added to the first token). */
export function pacingHeaders(gapMs: number, firstMs: number, jitterMs = 0): Record<string, string> {
  const h: Record<string, string> = { 'x-paced-gap-ms': String(gapMs), 'x-paced-first-ms': String(firstMs) };
  if (jitterMs > 0) h['x-paced-jitter-ms'] = String(jitterMs);
  return h;
}
