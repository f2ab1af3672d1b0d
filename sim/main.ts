#!/usr/bin/env node
// engine-sim: runs the simulator until SIGTERM/SIGINT. Prints one JSON "listening" line on stdout so
// a parent process can find the port; every other message goes to stderr.
import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { type FaultFlag, type FaultRates, parseFaultFlag } from './faults.js';
import { readGatewayConfig } from './gateway-config.js';
import { SIM_DEFAULTS, type SimOptions, SimOptionsError } from './options.js';
import { PROFILES } from './profile.js';
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

function choiceArg<T extends string>(allowed: readonly T[]) {
  return (value: string): T => {
    if (!(allowed as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${allowed.join(', ')}`);
    return value as T;
  };
}

// engine-sim imports nothing from the rest of loadfleet, so it reads the package version itself.
function simVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function parseArgs(argv: string[]): SimOptions {
  const d = SIM_DEFAULTS;
  const program = new Command('engine-sim')
    .description('OpenAI-compatible streaming LLM engine simulator (loopback load-test target)')
    .option('--host <host>', 'interface to listen on', d.host)
    .option('--port <n>', 'port (0 picks a free one)', numberArg, d.port)
    .option('--model <name>', 'served model name', d.model)
    .option(
      '--engine <kind>',
      'vllm (continuous batching, KV cache; the default) or simple (fixed timing; the default when a simple flag is given)',
      choiceArg(['vllm', 'simple'] as const),
    )
    .option('--profile <name>', `vllm: step-cost calibration (${Object.keys(PROFILES).join(', ')})`, d.profile)
    .option('--max-num-seqs <n>', 'vllm: most requests in the running batch', numberArg, d.maxNumSeqs)
    .option('--max-num-batched-tokens <n>', 'vllm: token budget of one step', numberArg, d.maxNumBatchedTokens)
    .option('--kv-cache-tokens <n>', "vllm: KV cache capacity in tokens (default: the profile's)", numberArg)
    .option('--enable-prefix-caching', 'vllm: share full 16-token prompt blocks between requests', false)
    .option('--scheduling <policy>', 'vllm: fcfs or priority', choiceArg(['fcfs', 'priority'] as const), d.scheduling)
    .option('--replicas <n>', 'simulated replicas in this process', numberArg, d.replicas)
    .option('--gateway', 'put inference-gateway flow control in front', false)
    .option('--upstream <url>', 'gateway: forward to this OpenAI base URL instead of simulated replicas')
    .option('--gateway-config <file>', 'gateway: JSON {"objectives": {"<name>": <priority>, ...}}')
    .option(
      '--max-concurrency <n>',
      'gateway: in-flight requests per replica at saturation; simple: requests generating at once',
      numberArg,
      d.maxConcurrency,
    )
    .option('--headroom <x>', 'gateway: admit up to max-concurrency x (1 + headroom)', numberArg, d.headroom)
    .option('--queue-timeout-s <s>', 'gateway: longest queue wait before a 429', numberArg, d.queueTimeoutS)
    .option('--queue-capacity <n>', 'gateway: most queued requests before a 429', numberArg, d.queueCapacity)
    // No commander defaults here: whether these were given decides the default engine (see SimOptions.engine).
    .option(
      '--ttft-ms <ms>',
      `simple: time from admission to first token, before prefill (default: ${d.ttftMs}; implies --engine simple)`,
      numberArg,
    )
    .option(
      '--itl-ms <ms>',
      `simple: engine step period, i.e. time between tokens (default: ${d.itlMs}; implies --engine simple)`,
      numberArg,
    )
    .option(
      '--prefill-us-per-token <us>',
      `simple: extra time to first token per prompt token (default: ${d.prefillUsPerToken}; implies --engine simple)`,
      numberArg,
    )
    .option('--max-model-len <n>', 'longest accepted prompt + max_tokens, in tokens', numberArg, d.maxModelLen)
    .option('--reasoning-tokens <n>', 'leading output tokens sent as reasoning_content (chat)', numberArg, d.reasoningTokens)
    .option(
      '--lora-modules <names>',
      'LoRA adapter names served besides the model (comma-separated)',
      (v: string) => v.split(',').filter(Boolean),
      d.loraModules,
    )
    .option('--max-loras <n>', 'most LoRA adapters loaded at once', numberArg, d.maxLoras)
    .option('--lora-load-ms <ms>', 'time to load an adapter that is not loaded', numberArg, d.loraLoadMs)
    .option('--fault <NAME=VALUE>', 'inject a fault, e.g. 429-rate=0.1 or stall-ms=500 (repeatable)', faultArg, [])
    .option('--fault-seed <n>', 'seed of the fault PRNG', numberArg, d.faultSeed)
    .option('--allow-fault-header', 'honour the x-sim-fault request header', false)
    .option(
      '--otlp-traces-endpoint <url>',
      "send an OpenTelemetry span per request (vLLM's llm_request) here; protocol from OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: grpc (default), http/protobuf or http/json",
    )
    .option(
      '--prefill-replicas <n>',
      'disaggregated serving: prefill replicas in front of the --replicas decode replicas (0: aggregated)',
      numberArg,
      d.prefillReplicas,
    )
    .option('--kv-transfer-ms <ms>', "disaggregated: time to move a request's KV to its decode replica", numberArg, d.kvTransferMs)
    .option(
      '--kv-transfer-us-per-token <us>',
      'disaggregated: further KV transfer time per prompt token',
      numberArg,
      d.kvTransferUsPerToken,
    )
    .version(simVersion())
    .addHelpText(
      'after',
      `
Examples:
  ${process.env.LOADFLEET_ARGV0 ?? 'loadfleet'} sim --port 8000          # one simulated vLLM replica (the seed's H100 profile)
  ${process.env.LOADFLEET_ARGV0 ?? 'loadfleet'} sim --port 8000 --gateway          # behind inference-gateway flow control
  ${process.env.LOADFLEET_ARGV0 ?? 'loadfleet'} sim --ttft-ms 40 --itl-ms 8 --fault 429-rate=0.1          # fixed timing, 10% 429s
  ${process.env.LOADFLEET_ARGV0 ?? 'loadfleet'} sim --otlp-traces-endpoint http://127.0.0.1:4317          # a span per request, OTLP/gRPC
  ${process.env.LOADFLEET_ARGV0 ?? 'loadfleet'} sim --prefill-replicas 1 --kv-transfer-ms 20 --otlp-traces-endpoint http://127.0.0.1:4317          # prefill and decode spans`,
    )
    .exitOverride()
    .parse(argv);
  type Optional = 'engine' | 'upstream' | 'kvCacheTokens' | 'ttftMs' | 'itlMs' | 'prefillUsPerToken' | 'otlpTracesEndpoint';
  type Flags = Omit<Required<SimOptions>, 'faults' | 'stallMs' | 'objectives' | Optional> &
    Partial<Pick<SimOptions, Optional>> & {
      fault: FaultFlag[];
      gatewayConfig?: string;
    };
  const { fault, gatewayConfig, ...rest } = program.opts<Flags>();
  const faults: FaultRates = {};
  let stallMs: number | undefined;
  for (const flag of fault) {
    if ('stallMs' in flag) stallMs = flag.stallMs;
    else faults[flag.kind] = flag.rate;
  }
  const objectives = gatewayConfig === undefined ? undefined : readGatewayConfig(gatewayConfig);
  return { ...rest, faults, ...(stallMs === undefined ? {} : { stallMs }), ...(objectives ? { objectives } : {}) };
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
  // Gateway mode adds where the engine and gateway metrics are apart; the first five fields never change.
  const line = {
    event: 'listening',
    url: sim.url,
    base_url: `${sim.url}/v1`,
    metrics_url: `${sim.url}/metrics`,
    model: options.model ?? SIM_DEFAULTS.model,
    ...(options.gateway && sim.vllmMetricsUrl ? { vllm_metrics_url: sim.vllmMetricsUrl } : {}),
    ...(sim.eppMetricsUrl ? { epp_metrics_url: sim.eppMetricsUrl } : {}),
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
  const stop = (): void => {
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // A parent that embeds the simulator (the coordinator) sets this and keeps our stdin open: when
  // the parent dies, even by SIGKILL, the pipe closes and the simulator goes with it.
  if (process.env[EXIT_WITH_STDIN_ENV] === '1') {
    process.stdin.once('close', stop);
    process.stdin.resume();
  }
}

/** The environment variable that ties the simulator's life to its stdin (see main). */
const EXIT_WITH_STDIN_ENV = 'ENGINE_SIM_EXIT_WITH_STDIN';

main().catch((err: unknown) => {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : EXIT_INVALID_INPUT); // commander already printed it
  if (err instanceof SimOptionsError) {
    process.stderr.write(`engine-sim: invalid options\n  ${err.problems.map(asFlagProblem).join('\n  ')}\n`);
    process.exit(EXIT_INVALID_INPUT);
  }
  process.stderr.write(`engine-sim: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
