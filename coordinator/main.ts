#!/usr/bin/env node
// `coordinator`: runs a plan across N agents and writes one merged, aligned run directory.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ErrorCode, ExitCode, exitCodeOf, formatError, LoadfleetError } from '../shared/errors.js';
import { loadPlanFile } from '../shared/plan-load.js';
import { TOKEN_ENV } from '../shared/protocol.js';
import { DEFAULT_PLAN_FILE, EMBEDDED_SIM_ARGS } from './default-plan.js';
import { executeRun } from './run.js';
import { sweepCommand } from './sweep/command.js';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be an integer >= 1');
  return n;
}

function nonNegative(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('must be a number >= 0');
  return n;
}

function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be an integer >= 0');
  return n;
}

function hostPort(value: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(value);
  if (!m) throw new InvalidArgumentError('must be HOST:PORT, e.g. 0.0.0.0:7000');
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}

interface StartOptions {
  agents: number;
  plan?: string;
  out: string;
  listen?: { host: string; port: number };
  token?: string;
  local?: boolean;
  joinTimeoutS: number;
  quiet?: boolean;
  simArg: string[];
  agentArg: string[];
  clockToleranceMs: number;
  onClockMismatch: 'fail' | 'align';
  maxStartSkewMs: number;
  maxAgentLoss: number;
  tlsCert?: string;
  tlsKey?: string;
}

async function start(o: StartOptions): Promise<number> {
  const plan = await loadPlanFile(o.plan ?? DEFAULT_PLAN_FILE);
  const spawnLocal = o.local === true || o.listen === undefined;
  const token = o.token ?? process.env[TOKEN_ENV] ?? (spawnLocal && !o.listen ? randomBytes(24).toString('base64url') : undefined);
  if (!token)
    throw new LoadfleetError(ErrorCode.USAGE, `--listen needs a shared token: pass --token or set $${TOKEN_ENV}`, {
      exitCode: ExitCode.INVALID_INPUT,
    });
  const log = (line: string): void => void (o.quiet ? undefined : process.stderr.write(`[coordinator] ${line}\n`));
  const result = await executeRun({
    plan,
    agents: o.agents,
    outDir: o.out,
    listenHost: o.listen?.host ?? '127.0.0.1',
    listenPort: o.listen?.port ?? 0,
    token,
    spawnLocal,
    joinTimeoutMs: o.joinTimeoutS * 1000,
    simArgs: [...EMBEDDED_SIM_ARGS, ...o.simArg],
    agentArgs: o.agentArg,
    clockToleranceNs: o.clockToleranceMs * 1e6,
    onClockMismatch: o.onClockMismatch,
    maxStartSkewNs: o.maxStartSkewMs * 1e6,
    maxAgentLoss: o.maxAgentLoss,
    ...(await tlsFiles(o)),
    log,
    progress: (line) => void (o.quiet ? undefined : process.stderr.write(`${line}\n`)),
  });
  process.stdout.write(`${result.summaryLines.join('\n')}\n`);
  return result.status === 'aborted' ? ExitCode.ABORTED : ExitCode.OK;
}

async function tlsFiles(o: StartOptions): Promise<{ tls?: { cert: Buffer; key: Buffer } }> {
  if (!o.tlsCert && !o.tlsKey) return {};
  if (!o.tlsCert || !o.tlsKey)
    throw new LoadfleetError(ErrorCode.USAGE, '--tls-cert and --tls-key go together', { exitCode: ExitCode.INVALID_INPUT });
  return { tls: { cert: await readFile(o.tlsCert), key: await readFile(o.tlsKey) } };
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

const program = new Command('coordinator')
  .description('loadfleet coordinator: one plan, N agents, one merged and aligned run.')
  .exitOverride();

program
  .command('start')
  .description('run a plan (default: the built-in realtime + batch plan against engine-sim)')
  .option('--agents <n>', 'number of agents', positiveInt, 1)
  .option('--plan <file>', 'plan file (JSON or YAML, loadfleet.plan/v1)')
  .option('--out <dir>', 'directory for run directories', 'runs')
  .option('--listen <host:port>', 'accept remote agents here instead of spawning local ones', hostPort)
  .option('--token <token>', `shared secret agents must present (default: $${TOKEN_ENV}; local mode generates one)`)
  .option('--local', 'spawn the agents on this machine (the default without --listen)')
  .option('--join-timeout-s <s>', 'how long to wait for the agents', positiveInt, 60)
  .option('--quiet', 'print only the final summary')
  .option('--clock-tolerance-ms <ms>', 'how far an agent may be from its declared common clock domain', nonNegative, 2)
  .addOption(
    new Option('--on-clock-mismatch <what>', 'a declared common domain that probes contradict').choices(['fail', 'align']).default('fail'),
  )
  .option('--max-start-skew-ms <ms>', 'a larger measured start skew marks the run degraded', nonNegative, 5)
  .option('--tls-cert <file>', 'PEM certificate: agents connect with wss://')
  .option('--tls-key <file>', 'PEM private key for --tls-cert')
  .option('--max-agent-loss <n>', 'agents that may be lost before the run aborts (within it: degraded)', count, 0)
  .addOption(new Option('--sim-arg <arg>', 'extra argument for the embedded engine-sim (repeatable)').argParser(collect).default([]))
  .addOption(new Option('--agent-arg <arg>', 'extra argument for local agents (repeatable)').argParser(collect).default([]).hideHelp())
  .action(async (o: StartOptions) => {
    process.exitCode = await start(o);
  });

sweepCommand(program, collect);

async function main(): Promise<void> {
  try {
    await program.parseAsync();
  } catch (err) {
    const code = (err as { exitCode?: number; code?: string }).code?.startsWith('commander.')
      ? (err as { exitCode: number }).exitCode
      : undefined;
    if (code !== undefined) {
      process.exitCode = code === 0 ? ExitCode.OK : ExitCode.INVALID_INPUT;
      return;
    }
    process.stderr.write(`${formatError(err)}\n`);
    process.exitCode = exitCodeOf(err);
  }
}

await main();
// Sockets, timers and children are all closed by now; exit explicitly so nothing lingers.
process.exit(process.exitCode ?? 0);
