// The run flags `coordinator start` and `coordinator experiment` share (agents, embedded engine-sim
// arguments, clock and loss policy), defined once so both commands parse and document them alike,
// and turned into the matching RunOptions fields in one place.
import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { EMBEDDED_SIM_ARGS } from './default-plan.js';
import type { MetricsFlags } from './live/cli.js';
import { addMetricsOptions, liveConsole, openMetrics } from './live/cli.js';
import type { RunOptions } from './run.js';

/** Parses an integer ≥ 1. */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be an integer >= 1');
  return n;
}

/** Parses a number ≥ 0. */
export function nonNegative(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('must be a number >= 0');
  return n;
}

/** Parses an integer ≥ 0. */
export function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be an integer >= 0');
  return n;
}

/** Collects a repeatable option. */
export const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** The shared flags as commander parses them. */
export interface RunFlags extends MetricsFlags {
  agents: number;
  joinTimeoutS: number;
  quiet?: boolean;
  simArg: string[];
  agentArg: string[];
  clockToleranceMs: number;
  onClockMismatch: 'fail' | 'align';
  maxStartSkewMs: number;
  maxAgentLoss: number;
}

/** Adds the shared run flags to a command. */
export function addRunFlags(cmd: Command): Command {
  return addMetricsOptions(cmd)
    .option('--agents <n>', 'number of agents', positiveInt, 1)
    .option('--join-timeout-s <s>', 'how long to wait for the agents', positiveInt, 60)
    .option('--quiet', 'print only the final summary')
    .option('--clock-tolerance-ms <ms>', 'how far an agent may be from its declared common clock domain', nonNegative, 2)
    .addOption(
      new Option('--on-clock-mismatch <what>', 'a declared common domain that probes contradict')
        .choices(['fail', 'align'])
        .default('fail'),
    )
    .option('--max-start-skew-ms <ms>', 'a larger measured start skew marks the run degraded', nonNegative, 5)
    .option('--max-agent-loss <n>', 'agents that may be lost before the run aborts (within it: degraded)', count, 0)
    .addOption(new Option('--sim-arg <arg>', 'extra argument for the embedded engine-sim (repeatable)').argParser(collect).default([]))
    .addOption(new Option('--agent-arg <arg>', 'extra argument for local agents (repeatable)').argParser(collect).default([]).hideHelp());
}

/** The RunOptions fields the shared flags decide, with the live console and /metrics they open. */
export async function runOptionsFromFlags(o: RunFlags): Promise<{
  options: Pick<
    RunOptions,
    | 'agents'
    | 'joinTimeoutMs'
    | 'simArgs'
    | 'agentArgs'
    | 'clockToleranceNs'
    | 'onClockMismatch'
    | 'maxStartSkewNs'
    | 'maxAgentLoss'
    | 'log'
    | 'progress'
    | 'liveBlock'
    | 'metrics'
  >;
  /** Leaves the live block on screen and closes /metrics: call once every run is over. */
  close(): Promise<void>;
}> {
  const con = liveConsole(o.quiet === true);
  const metrics = await openMetrics(o, con.notice);
  return {
    options: {
      agents: o.agents,
      joinTimeoutMs: o.joinTimeoutS * 1000,
      simArgs: [...EMBEDDED_SIM_ARGS, ...o.simArg],
      agentArgs: o.agentArg,
      clockToleranceNs: o.clockToleranceMs * 1e6,
      onClockMismatch: o.onClockMismatch,
      maxStartSkewNs: o.maxStartSkewMs * 1e6,
      maxAgentLoss: o.maxAgentLoss,
      log: con.log,
      progress: con.progress,
      liveBlock: con.block,
      metrics,
    },
    close: async () => {
      con.release();
      await metrics?.close();
    },
  };
}
