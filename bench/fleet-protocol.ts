// What the coordinator_ingest suite and its synthetic fleet processes share: the IPC messages
// between them and the shape of what each synthetic agent sends. Kept apart from
// synthetic-fleet.ts, which starts its agents as soon as it is loaded.

/** What the parent tells a fleet process. */
export type FleetCommand = { cmd: 'records' } | { cmd: 'intervals' } | { cmd: 'idle' } | { cmd: 'report' } | { cmd: 'final' };

/** What a fleet process tells the parent. */
export type FleetEvent =
  | { type: 'started'; agents: number }
  | { type: 'report'; records_acked: number; intervals_acked: number }
  | { type: 'error'; message: string };

/** Rows per record batch (a real agent flushes up to 1,000 every 250 ms; 100 is a busy agent's 250 ms). */
export const BATCH_ROWS = 100;

/** The histograms a real closed-loop agent's interval carries. */
export const INTERVAL_METRICS = ['ttft', 'ttfo', 'tpot', 'ntpot', 'itl', 'e2e'] as const;
