// The journal header of a run: everything a coordinator that restarts needs to take the run up
// again without its agents' help — the plan as run (its seed rebuilds the schedule), the start
// instant and clock decision, each agent's share, epoch and timebase, the options that shaped the
// run, and where the agents were told to connect. Written once, durable before the first message.
import { hostname } from 'node:os';
import type { OffsetEstimate } from '../../shared/clock.js';
import type { Plan } from '../../shared/plan.js';
import type { ClockDecision } from '../clock/policy.js';
import { planSha256 } from '../plan-hash.js';
import type { Hello } from '../server.js';
import type { RunState } from './context.js';
import type { EmbeddedSim } from './embedded-sim.js';

/** The header's format name. */
export const JOURNAL_FORMAT = 'loadfleet.journal/v1';

/** One agent of the run as the header keeps it. */
export interface JournalAgent {
  index: number;
  agent_id: string;
  host: string;
  epoch: string;
  start_local_ns: bigint;
  start_offset_ns: number | null;
  offset: OffsetEstimate;
  /** Its hello as it joined, without the secret (run.json's agent fields read it). */
  hello: Hello;
}

/** The journal's first frame. */
export interface JournalHeader {
  format: typeof JOURNAL_FORMAT;
  run_id: string;
  plan: Plan;
  /** The hash of the plan as the command gave it (before its target was resolved): the same command restarted finds its run by it. Absent in journals written before it was kept. */
  plan_sha256?: string;
  /** The embedded engine-sim the run started (null: the plan named its target). Absent in older journals. */
  embedded_sim?: EmbeddedSim | null;
  /** The global schedule's hash: a recovery rebuilds the schedule from the plan and must find the same one. */
  schedule_sha256: string;
  start_ns: bigint;
  decision: ClockDecision;
  agents: JournalAgent[];
  loss_budget: number;
  options: {
    agent_grace_ms: number;
    max_agent_loss: number;
    clock_tolerance_ns: number;
    max_start_skew_ns: number;
    /** The address the agents were told to connect to (a recovery listens there again). */
    listen_url: string | null;
    experiment: { name: string; arm: string; repeat: number } | null;
  };
  /** The coordinator process that wrote it: a journal whose writer is still running on this host is a run in progress. */
  coordinator: { pid: number; host: string; started_unix_ms: number };
}

function withoutSecret(h: Hello): Hello {
  const { secret: _secret, resume_run_id: _run, resume_live: _live, ...rest } = h;
  return rest;
}

/** The header of `run`, once its start instant is chosen. */
export function journalHeader(run: RunState): JournalHeader {
  return {
    format: JOURNAL_FORMAT,
    run_id: run.runId,
    plan: run.plan,
    plan_sha256: planSha256(run.opts.plan),
    embedded_sim: run.embeddedSim,
    schedule_sha256: run.schedule.sha256,
    start_ns: run.startNs,
    decision: run.decision!,
    agents: run.states.map((s) => ({
      index: s.index,
      agent_id: s.id,
      host: s.conn.hello.host,
      epoch: s.epoch ?? '',
      start_local_ns: s.startLocalNs,
      start_offset_ns: s.startOffsetNs ?? null,
      offset: s.offset,
      hello: withoutSecret(s.conn.hello),
    })),
    loss_budget: run.lossBudget,
    options: {
      agent_grace_ms: run.opts.agentGraceMs,
      max_agent_loss: run.opts.maxAgentLoss,
      clock_tolerance_ns: run.opts.clockToleranceNs,
      max_start_skew_ns: run.opts.maxStartSkewNs,
      listen_url: run.listenUrl,
      experiment: run.opts.experiment ?? null,
    },
    coordinator: { pid: process.pid, host: hostname(), started_unix_ms: Date.now() },
  };
}
