// What the coordinator_ingest suite and its synthetic fleet processes share: the IPC messages
// between them and the shape of what each synthetic agent sends. Kept apart from
// synthetic-fleet.ts, which starts its agents as soon as it is loaded.
import type { Window } from '../shared/plan.js';

/**
 * A whole open-loop run's worth of distinct requests, split across the fleet by request index
 * (agent k of n sends every index ≡ k mod n), each with its interval histograms and, once all of
 * its records are acknowledged, its final run histograms (coordinator_memory).
 */
export interface StreamCommand {
  cmd: 'stream';
  /** Requests of the whole fleet. */
  requests: number;
  /** Agents of the whole fleet (every fleet process). */
  agents: number;
  /** Intended sends per second: request g is intended at g / rate_per_s seconds. */
  rate_per_s: number;
  /** The one class's name and the plan's windows. */
  class: string;
  windows: Window[];
}

/**
 * Real-time pacing (coordinator_ingest's merge lag): from `start_epoch_ms` (a wall-clock instant
 * every fleet process shares), at the end of each second k < `seconds` every agent sends its
 * interval for second `first_second + k` and the records of that second: `records_per_agent_s`
 * requests a second, of which every `sample_every`-th is sent (1: all of them), each a distinct
 * request_index, so the coordinator does every record's full work (no duplicate is dropped).
 */
export interface PacedCommand {
  cmd: 'paced';
  start_epoch_ms: number;
  seconds: number;
  first_second: number;
  /** Agents of the whole fleet (every process): request indices are striped over them. */
  fleet_agents: number;
  records_per_agent_s: number;
  sample_every: number;
}

/** What one fleet process saw of one paced second (wall-clock epoch ms). */
export interface PacedSecondReport {
  /** Agents whose interval for the second was acknowledged. */
  acked: number;
  /** When the last of those acknowledgements arrived. */
  last_ack_ms: number;
  /** When the process had handed the last agent's interval and records to its sockets. */
  last_send_ms: number;
  /** Record rows sent for the second (all agents of the process). */
  rows: number;
}

/** What the parent tells a fleet process. */
export type FleetCommand =
  | { cmd: 'records' }
  | { cmd: 'intervals' }
  | { cmd: 'idle' }
  | { cmd: 'report' }
  | { cmd: 'final' }
  | { cmd: 'paced_report' }
  | PacedCommand
  | StreamCommand;

/** What a fleet process tells the parent. */
export type FleetEvent =
  | { type: 'started'; agents: number }
  /** Totals so far, and each record batch's wait for its acknowledgement (ms) since the previous report. */
  | { type: 'report'; records_acked: number; intervals_acked: number; ack_waits_ms: number[] }
  | { type: 'streamed'; agents: number; records: number }
  /** Paced seconds by their number (first_second + k). */
  | { type: 'paced'; seconds: Record<number, PacedSecondReport> }
  | { type: 'error'; message: string };

/** Rows per record batch (a real agent flushes up to 1,000 every 250 ms; 100 is a busy agent's 250 ms). */
export const BATCH_ROWS = 100;

/** The histograms a real closed-loop agent's interval carries. */
export const INTERVAL_METRICS = ['ttft', 'ttfo', 'tpot', 'ntpot', 'itl', 'e2e'] as const;
