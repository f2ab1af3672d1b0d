#!/usr/bin/env node
// `agent`: joins a coordinator's fleet and runs its share of every plan it is sent, streaming results back.
import { readFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { anchoredClock, hostClockDomain } from '../shared/clock.js';
import { ErrorCode, ExitCode, exitCodeOf, formatError, LoadfleetError } from '../shared/errors.js';
import { TOKEN_ENV } from '../shared/protocol.js';
import { VERSION } from '../shared/version.js';
import { COORDINATOR_WAIT_ENV, DEFAULT_COORDINATOR_WAIT_S } from './outlive.js';
import { autoWorkers } from './self-test/auto-workers.js';
import type { SelfTestMode } from './self-test/cache.js';
import { selfTestFigures } from './self-test/cache.js';
import { runAgent } from './session.js';
import { handleStopSignals } from './terminate.js';
import type { StallSpec } from './test-stalls.js';
import { parseStallSpec, startStalls } from './test-stalls.js';

const CLOCK_DOMAIN = /^[A-Za-z0-9._:-]{1,64}$/;

function clockDomain(value: string): string {
  if (!CLOCK_DOMAIN.test(value)) throw new InvalidArgumentError('must match [A-Za-z0-9._:-]{1,64}');
  return value;
}

function integer(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n)) throw new InvalidArgumentError('must be a number');
  return n;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

function threads(value: string): number | 'auto' {
  if (value === 'auto') return 'auto';
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new InvalidArgumentError('must be an integer from 1 to 64, or auto');
  return n;
}

const program = new Command('agent')
  .description('A loadfleet agent: joins a coordinator and runs its exact share of the plan.')
  .version(VERSION)
  .option('--coordinator <url>', 'coordinator WebSocket URL, e.g. ws://10.0.0.5:7000 (required unless --self-test-only)')
  .option('--token <token>', `shared secret (default: $${TOKEN_ENV})`)
  .option(
    '--id <name>',
    'agent id shown in artifacts (default <hostname>-<pid>); repeat it to serve several agents from this one process (each its own link, share and records; they share its event loop)',
    collect,
    [],
  )
  .option('--clock-domain <id>', 'declared clock domain (e.g. ptp:rack-a); default host:<hostname>:<boot id>', clockDomain)
  .option(
    '--spool-dir <dir>',
    'where finished requests are spooled (a restarted agent uploads what it finds)',
    join(tmpdir(), 'loadfleet-spool'),
  )
  .option('--workers <n>', "worker threads that stripe this agent's share (one core each); auto: one per free core", threads, 1)
  .option('--ca <file>', 'PEM CA certificate to trust for a wss:// coordinator')
  .option('--connect-timeout-s <s>', 'give up reaching the coordinator after this long', integer, 120)
  .addOption(
    new Option(
      '--coordinator-wait-s <s>',
      'when the coordinator goes away mid-run: after its grace the load stops, and the spool is offered to a coordinator that comes back for this long before the agent exits and says how to hand it over',
    )
      .argParser(integer)
      .env(COORDINATOR_WAIT_ENV)
      .default(DEFAULT_COORDINATOR_WAIT_S),
  )
  .addOption(
    new Option(
      '--self-test <mode>',
      "measure this agent's limits before joining: run (always), cached (reuse this host's figures of the same build and Node, < 24 h old), skip",
    )
      .choices(['run', 'cached', 'skip'])
      .env('LOADFLEET_SELF_TEST')
      .default('cached'),
  )
  .option('--self-test-only', 'run the self-test, print its figures as JSON and exit (no coordinator)')
  .option('--stay', 'after a coordinator releases this agent (or goes away), wait for the next one instead of exiting')
  .addOption(new Option('--test-clock-offset-ms <ms>', 'shift this agent wall clock (tests only)').argParser(integer).default(0).hideHelp())
  .addOption(new Option('--test-arm-delay-ms <ms>', 'delay answering arm (tests only)').argParser(integer).default(0).hideHelp())
  .addOption(
    new Option('--test-starve <id>', 'the agent with this id keeps its event loop busy 60 ms of every 100 ms (tests only)').hideHelp(),
  )
  .addOption(
    new Option('--test-stall <spec>', 'stall the event loop of agent <id>:<ms>/<every_ms>[@<runs>] (tests only; repeatable)')
      .argParser((v: string, prev: StallSpec[] = []) => [...prev, parseStallSpec(v)])
      .hideHelp(),
  )
  .addHelpText(
    'after',
    `
Examples:
  LOADFLEET_TOKEN=secret ${process.env.LOADFLEET_ARGV0 ?? 'loadfleet'} agent --coordinator ws://10.0.0.5:7000
  ${process.env.LOADFLEET_ARGV0 ?? 'loadfleet'} agent --coordinator wss://coord.example:7000 --ca ca.pem --id rack-a-1 --workers 2
  ${process.env.LOADFLEET_ARGV0 ?? 'loadfleet'} agent --coordinator ws://10.0.0.5:7000 --stay          # a standing agent (systemd, a long-lived pod)`,
  )
  .exitOverride();

async function main(): Promise<number> {
  try {
    program.parse();
  } catch (err) {
    return (err as { exitCode?: number }).exitCode === 0 ? ExitCode.OK : ExitCode.INVALID_INPUT;
  }
  const o = program.opts<{
    coordinator?: string;
    selfTest: SelfTestMode;
    selfTestOnly?: boolean;
    token?: string;
    id: string[];
    clockDomain?: string;
    connectTimeoutS: number;
    coordinatorWaitS: number;
    stay?: boolean;
    ca?: string;
    spoolDir: string;
    workers: number | 'auto';
    testClockOffsetMs: number;
    testArmDelayMs: number;
    testStarve?: string;
    testStall?: StallSpec[];
  }>();
  const ids = o.id.length > 0 ? o.id : [`${hostname()}-${process.pid}`];
  if (new Set(ids).size !== ids.length)
    throw new LoadfleetError(ErrorCode.USAGE, `--id given twice: ${ids.join(', ')}`, { exitCode: ExitCode.INVALID_INPUT });
  // One flag for every local agent, so a test can starve exactly one of them: a client-limited agent
  // (every agent this process serves shares the starved loop).
  if (o.testStarve !== undefined && ids.includes(o.testStarve)) starveEventLoop();
  const onPlan = new Map<string, () => void>();
  for (const s of o.testStall ?? [])
    if (ids.includes(s.agentId)) {
      const hook = startStalls(s);
      const before = onPlan.get(s.agentId);
      onPlan.set(s.agentId, () => {
        before?.();
        hook();
      });
    }
  const logOf =
    (id: string) =>
    (line: string): void =>
      void process.stderr.write(`[agent ${id}] ${line}\n`);
  const log = logOf(ids.length === 1 ? ids[0]! : ids.join('+'));
  if (o.selfTestOnly) {
    const figures = await selfTestFigures(o.selfTest === 'skip' ? 'run' : o.selfTest, log);
    process.stdout.write(`${JSON.stringify(figures)}\n`);
    return ExitCode.OK;
  }
  const coordinator = o.coordinator;
  if (!coordinator) throw new LoadfleetError(ErrorCode.USAGE, 'pass --coordinator URL', { exitCode: ExitCode.INVALID_INPUT });
  const token = o.token ?? process.env[TOKEN_ENV];
  if (!token)
    throw new LoadfleetError(ErrorCode.USAGE, `no token: pass --token or set $${TOKEN_ENV}`, { exitCode: ExitCode.INVALID_INPUT });
  // SIGTERM or SIGINT (a pod's eviction or deletion, a container's stop signal, `systemctl stop`,
  // Ctrl-C): hand over what was measured, then go.
  handleStopSignals(log, o.spoolDir);
  // Measured before joining, so the coordinator knows this agent's limits before it plans a run on it.
  const selfTest = await selfTestFigures(o.selfTest, log).catch((err: Error) => {
    log(`self-test failed (${err.message}); joining without figures`);
    return null;
  });
  let workers = o.workers;
  if (workers === 'auto') {
    // The agents this process serves share its free cores.
    const auto = autoWorkers(selfTest, undefined, ids.length);
    workers = auto.workers;
    log(`--workers auto: ${workers} (${auto.free.toFixed(1)} free cores${ids.length > 1 ? ` over ${ids.length} agents` : ''})`);
  }
  // Several ids: one session each, side by side on this process's loop (a packed local layout,
  // coordinator/local-layout.ts). Each is an agent of its own to the coordinator; the process ends
  // when every one of them has, with the first failure's code.
  const clock = anchoredClock(BigInt(Math.round(o.testClockOffsetMs * 1e6)));
  const ca = o.ca ? readFileSync(o.ca) : undefined;
  const codes = await Promise.all(
    ids.map((agentId) =>
      runAgent({
        coordinatorUrl: coordinator,
        token,
        agentId,
        // In a container the hostname is the pod's: LOADFLEET_NODE_NAME (the Kubernetes manifests set
        // it from spec.nodeName) names the machine too, so run.json shows which agents shared one.
        host: process.env['LOADFLEET_NODE_NAME'] ? `${process.env['LOADFLEET_NODE_NAME']}/${hostname()}` : hostname(),
        clockDomainId: o.clockDomain ?? hostClockDomain(),
        clockDomainDeclared: o.clockDomain !== undefined,
        clock,
        shareHostAnchor: o.testClockOffsetMs === 0,
        // A staying agent waits for coordinators for as long as it lives (a systemd unit, a long-lived pod).
        connectTimeoutMs: o.stay ? Number.POSITIVE_INFINITY : o.connectTimeoutS * 1000,
        coordinatorWaitMs: o.coordinatorWaitS * 1000,
        stay: o.stay === true,
        spoolDir: o.spoolDir,
        workers,
        selfTest,
        ...(ca ? { ca } : {}),
        armDelayMs: o.testArmDelayMs,
        ...(onPlan.has(agentId) ? { onPlan: onPlan.get(agentId)! } : {}),
        log: logOf(agentId),
      }),
    ),
  );
  return codes.find((c) => c !== ExitCode.OK) ?? ExitCode.OK;
}

function starveEventLoop(): void {
  setInterval(() => {
    const until = performance.now() + 60;
    while (performance.now() < until) {}
  }, 40).unref();
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${formatError(err)}\n`);
    process.exit(exitCodeOf(err));
  },
);
