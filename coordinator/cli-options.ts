// The fleet and run flags `coordinator start`, `sweep` and `experiment` share (where agents come
// from, the token and TLS, embedded engine-sim arguments, clock, loss and grace policy), defined
// once so the three commands parse and document them alike, and turned into the matching
// RunOptions fields in one place.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { ErrorCode, ExitCode, LoadfleetError } from '../shared/errors.js';
import { TOKEN_ENV } from '../shared/protocol.js';
import type { CostFlags } from './cost/flags.js';
import { addCostFlags } from './cost/flags.js';
import { EMBEDDED_SIM_ARGS } from './default-plan.js';
import type { HeadroomOptions, HeadroomPolicy } from './headroom/index.js';
import { DEFAULT_SPEED } from './headroom/load.js';
import { DEFAULT_LIMITS } from './headroom/rule.js';
import type { MetricsFlags } from './live/cli.js';
import { addMetricsOptions, liveConsole, openMetrics } from './live/cli.js';
import type { LocalLayoutMode } from './local-layout.js';
import { LOCAL_LAYOUT_MODES } from './local-layout.js';
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

/** Parses a fraction in (0, 1]. */
export function fraction(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 1) throw new InvalidArgumentError('must be a number in (0, 1]');
  return n;
}

/** Parses a number > 0. */
export function positive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a number > 0');
  return n;
}

/** Parses `--records`: all, or sampled:K (K ≥ 2), as plan.records. */
export function recordsMode(value: string): 'all' | { sample_every: number } {
  if (value === 'all') return 'all';
  const m = /^sampled:(\d+)$/.exec(value);
  const k = m ? Number(m[1]) : Number.NaN;
  if (!Number.isInteger(k) || k < 2 || k > 1_000_000)
    throw new InvalidArgumentError('must be all or sampled:K with K an integer from 2 to 1,000,000');
  return { sample_every: k };
}

/** Parses HOST:PORT (an IPv6 host in brackets). */
export function hostPort(value: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(value);
  if (!m) throw new InvalidArgumentError('must be HOST:PORT, e.g. 0.0.0.0:7000');
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}

/** Collects a repeatable option. */
export const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** The shared flags as commander parses them. */
export interface RunFlags extends MetricsFlags, CostFlags {
  agents: number;
  listen?: { host: string; port: number };
  token?: string;
  local?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  agentGraceS: number;
  joinTimeoutS: number;
  quiet?: boolean;
  simArg: string[];
  agentArg: string[];
  clockToleranceMs: number;
  onClockMismatch: 'fail' | 'align';
  maxStartSkewMs: number;
  maxAgentLoss: number;
  headroom: HeadroomPolicy;
  headroomMaxElu: number;
  headroomMaxSloShare: number;
  assumeTtftMs: number;
  assumeTokensPerS: number;
  freeCores?: number;
  localLayout: LocalLayoutMode;
}

/** Adds the headroom flags (start, sweep, experiment, and the `plan` dry run). */
export function addHeadroomFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '--headroom <policy>',
        "before any request, project each agent's share against its self-test: refuse (a share over the ceiling), strict (over the limits too), warn (never refuse), off",
      )
        .choices(['refuse', 'strict', 'warn', 'off'])
        .default('refuse'),
    )
    .option(
      '--headroom-max-elu <f>',
      "largest projected event-loop utilisation of an agent's share (fraction of its ceiling)",
      fraction,
      DEFAULT_LIMITS.maxElu,
    )
    .option(
      '--headroom-max-slo-share <f>',
      'largest implied stamp-error p99 as a share of the tightest TTFT/E2E SLO bound',
      fraction,
      DEFAULT_LIMITS.maxSloShare,
    )
    .option(
      '--free-cores <n>',
      'the free cores local agents share, for the headroom check and the local layout (default: measured: logical CPUs less the 1-minute load average)',
      nonNegative,
    )
    .option('--assume-ttft-ms <ms>', 'the server speed the projection assumes: time to first token', positive, DEFAULT_SPEED.ttftMs)
    .option(
      '--assume-tokens-per-s <n>',
      'the server speed the projection assumes: output tokens per second per stream',
      positive,
      DEFAULT_SPEED.tokensPerS,
    );
}

/** The headroom options the flags ask for. */
export function headroomFromFlags(
  o: Pick<RunFlags, 'headroom' | 'headroomMaxElu' | 'headroomMaxSloShare' | 'assumeTtftMs' | 'assumeTokensPerS' | 'freeCores'>,
): HeadroomOptions {
  return {
    ...(o.freeCores !== undefined && { freeCores: o.freeCores }),
    policy: o.headroom,
    limits: { maxElu: o.headroomMaxElu, maxSloShare: o.headroomMaxSloShare },
    speed: { ttftMs: o.assumeTtftMs, tokensPerS: o.assumeTokensPerS },
  };
}

/** Adds the shared run flags to a command. */
export function addRunFlags(cmd: Command): Command {
  return addCostFlags(addHeadroomFlags(addMetricsOptions(cmd)))
    .option('--agents <n>', 'number of agents', positiveInt, 1)
    .option('--listen <host:port>', 'accept remote agents here instead of spawning local ones', hostPort)
    .option('--token <token>', `shared secret agents must present (default: $${TOKEN_ENV}; local mode generates one)`)
    .option('--local', 'spawn the agents on this machine (the default without --listen)')
    .addOption(
      new Option(
        '--local-layout <layout>',
        'local agents: packed (one process per free core, each serving several agents, still reported per agent), process-per-agent, or auto (packed when more agents than free cores)',
      )
        .choices([...LOCAL_LAYOUT_MODES])
        .default('auto'),
    )
    .option('--tls-cert <file>', 'PEM certificate: agents connect with wss://')
    .option('--tls-key <file>', 'PEM private key for --tls-cert')
    .option('--join-timeout-s <s>', 'how long to wait for the agents', positiveInt, 60)
    .option('--quiet', 'print only the final summary')
    .option('--clock-tolerance-ms <ms>', 'how far an agent may be from its declared common clock domain', nonNegative, 2)
    .addOption(
      new Option('--on-clock-mismatch <what>', 'a declared common domain that probes contradict')
        .choices(['fail', 'align'])
        .default('fail'),
    )
    .option('--max-start-skew-ms <ms>', 'a larger measured start skew marks the run degraded', nonNegative, 5)
    .option('--max-agent-loss <n>', 'agents the fleet may lose (in a run, or between runs) and go on (the run: degraded)', count, 0)
    .option(
      '--agent-grace-s <s>',
      'an agent cut off mid-run is held as reconnecting this long (its load goes on) before it is lost',
      nonNegative,
      10,
    )
    .addOption(new Option('--sim-arg <arg>', 'extra argument for the embedded engine-sim (repeatable)').argParser(collect).default([]))
    .addOption(new Option('--agent-arg <arg>', 'extra argument for local agents (repeatable)').argParser(collect).default([]).hideHelp());
}

/** Adds --fail-on-slo: a missed SLO exits with ExitCode.SLO_MISSED (k6-style thresholds for CI). */
export function addFailOnSloOption(cmd: Command): Command {
  return cmd
    .option('--fail-on-slo', 'exit 4 when any class missed its declared SLO (its slo_verdict in run.json)')
    .option(
      '--fail-on-not-evaluable',
      'with --fail-on-slo, exit 4 also when a class SLO is not_evaluable (default: stated on stderr, not failed)',
    );
}

/** The RunOptions fields the shared flags decide, with the live console and /metrics they open. */
export async function runOptionsFromFlags(o: RunFlags): Promise<{
  options: Pick<
    RunOptions,
    | 'agents'
    | 'listenHost'
    | 'listenPort'
    | 'token'
    | 'spawnLocal'
    | 'tls'
    | 'agentGraceMs'
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
    | 'headroom'
    | 'localLayout'
    | 'freeCores'
    | 'notice'
  >;
  /** Leaves the live block on screen and closes /metrics: call once every run is over. */
  close(): Promise<void>;
}> {
  const fleet = await fleetFlags(o);
  const con = liveConsole(o.quiet === true);
  const metrics = await openMetrics(o, con.notice);
  return {
    options: {
      ...fleet,
      agentGraceMs: o.agentGraceS * 1000,
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
      headroom: headroomFromFlags(o),
      localLayout: o.localLayout,
      notice: con.notice,
      ...(o.freeCores !== undefined && { freeCores: o.freeCores }),
    },
    close: async () => {
      con.release();
      await metrics?.close();
    },
  };
}

// Where the agents come from: spawned here (local mode, the default without --listen, with a
// random token) or remote (--listen, the token required), and the TLS files if any.
async function fleetFlags(
  o: RunFlags,
): Promise<Pick<RunOptions, 'listenHost' | 'listenPort' | 'token' | 'spawnLocal'> & { tls?: { cert: Buffer; key: Buffer } }> {
  const spawnLocal = o.local === true || o.listen === undefined;
  const token = o.token ?? process.env[TOKEN_ENV] ?? (o.listen === undefined ? randomBytes(24).toString('base64url') : undefined);
  if (!token)
    throw new LoadfleetError(ErrorCode.USAGE, `--listen needs a shared token: pass --token or set $${TOKEN_ENV}`, {
      exitCode: ExitCode.INVALID_INPUT,
    });
  if (!o.tlsCert !== !o.tlsKey)
    throw new LoadfleetError(ErrorCode.USAGE, '--tls-cert and --tls-key go together', { exitCode: ExitCode.INVALID_INPUT });
  return {
    listenHost: o.listen?.host ?? '127.0.0.1',
    listenPort: o.listen?.port ?? 0,
    token,
    spawnLocal,
    ...(o.tlsCert && o.tlsKey ? { tls: { cert: await readFile(o.tlsCert), key: await readFile(o.tlsKey) } } : {}),
  };
}
