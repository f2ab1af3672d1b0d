#!/usr/bin/env node
// engine-sim: runs the simulator until SIGTERM/SIGINT. Prints one JSON "listening" line on stdout so
// a parent process can find the port; every other message goes to stderr.
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { type FaultFlag, type FaultRates, parseFaultFlag } from './faults.js';
import { SIM_DEFAULTS, type SimOptions, SimOptionsError } from './options.js';
import { startSim } from './server.js';

const EXIT_INVALID_INPUT = 2;

function numberArg(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('expected a number');
  return n;
}

function faultArg(value: string, previous: FaultFlag[]): FaultFlag[] {
  try {
    return [...previous, parseFaultFlag(value)];
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

function parseArgs(argv: string[]): SimOptions {
  const d = SIM_DEFAULTS;
  const program = new Command('engine-sim')
    .description('OpenAI-compatible streaming LLM engine simulator (loopback load-test target)')
    .option('--host <host>', 'interface to listen on', d.host)
    .option('--port <n>', 'port (0 picks a free one)', numberArg, d.port)
    .option('--model <name>', 'served model name', d.model)
    .option('--ttft-ms <ms>', 'time from admission to first token, before prefill', numberArg, d.ttftMs)
    .option('--itl-ms <ms>', 'engine step period (time between tokens)', numberArg, d.itlMs)
    .option('--prefill-us-per-token <us>', 'extra time to first token per prompt token', numberArg, d.prefillUsPerToken)
    .option('--max-concurrency <n>', 'requests generating at once; the rest wait', numberArg, d.maxConcurrency)
    .option('--max-model-len <n>', 'longest accepted prompt, in tokens', numberArg, d.maxModelLen)
    .option('--reasoning-tokens <n>', 'leading output tokens sent as reasoning_content (chat)', numberArg, d.reasoningTokens)
    .option('--fault <NAME=VALUE>', 'inject a fault, e.g. 429-rate=0.1 or stall-ms=500 (repeatable)', faultArg, [])
    .option('--fault-seed <n>', 'seed of the fault PRNG', numberArg, d.faultSeed)
    .option('--allow-fault-header', 'honour the x-sim-fault request header', false)
    .exitOverride()
    .parse(argv);
  const { fault, ...rest } = program.opts<Omit<Required<SimOptions>, 'faults' | 'stallMs'> & { fault: FaultFlag[] }>();
  const faults: FaultRates = {};
  let stallMs: number | undefined;
  for (const flag of fault) {
    if ('stallMs' in flag) stallMs = flag.stallMs;
    else faults[flag.kind] = flag.rate;
  }
  return { ...rest, faults, ...(stallMs === undefined ? {} : { stallMs }) };
}

// Problems name SimOptions fields (`itlMs: ...`); on the command line they read as flags (`--itl-ms: ...`).
function asFlagProblem(problem: string): string {
  return problem.replace(/^([a-zA-Z]+):/, (whole, field: string) =>
    field in SIM_DEFAULTS && field !== 'faults' ? `--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}:` : whole,
  );
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv);
  const sim = await startSim(options);
  const line = { event: 'listening', url: sim.url, base_url: `${sim.url}/v1`, metrics_url: `${sim.url}/metrics`, model: options.model };
  process.stdout.write(`${JSON.stringify(line)}\n`);
  const stop = (): void => {
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : EXIT_INVALID_INPUT); // commander already printed it
  if (err instanceof SimOptionsError) {
    process.stderr.write(`engine-sim: invalid options\n  ${err.problems.map(asFlagProblem).join('\n  ')}\n`);
    process.exit(EXIT_INVALID_INPUT);
  }
  process.stderr.write(`engine-sim: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
