// What every comparison client (bare undici, autocannon; the Python one mirrors it) is told, so
// each offers the same load: `concurrency` streams of `tokens` tokens for `durationS`.
import { parseArgs } from 'node:util';
import { INPUT_TOKENS } from './plans.js';

/** One comparison client's load. */
export interface ClientLoad {
  baseUrl: string;
  concurrency: number;
  tokens: number;
  durationS: number;
  gapMs: number;
  firstMs: number;
  /** Seconds to wait before the first request (a suite reads the idle process meanwhile); bare undici only. */
  idleS?: number;
  /** Seconds over which the streams are started evenly rather than at once; bare undici only. */
  rampS?: number;
}

/** What each comparison client prints as its last stdout line. */
export interface ClientReport {
  /** CPU (user + system) of the client process over the load window, from its own counters. */
  cpu_ms: number;
  wall_ms: number;
  responses: number;
  /** Data events the client saw (socket reads for the raw clients, SSE lines for aiohttp). */
  chunks_seen: number | null;
  bytes: number | null;
  errors: number;
  note?: string;
}

/** The command-line form of a load, for spawning a client. */
export function clientArgv(load: ClientLoad): string[] {
  return [
    '--url',
    load.baseUrl,
    '--concurrency',
    String(load.concurrency),
    '--tokens',
    String(load.tokens),
    '--duration-s',
    String(load.durationS),
    '--gap-ms',
    String(load.gapMs),
    '--first-ms',
    String(load.firstMs),
    // Only clients that read them are given these (the Python client knows the six above).
    ...(load.idleS !== undefined ? ['--idle-s', String(load.idleS)] : []),
    ...(load.rampS !== undefined ? ['--ramp-s', String(load.rampS)] : []),
  ];
}

/** Parses the arguments clientArgv wrote. */
export function parseClientArgv(argv: readonly string[]): ClientLoad {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      url: { type: 'string' },
      concurrency: { type: 'string' },
      tokens: { type: 'string' },
      'duration-s': { type: 'string' },
      'gap-ms': { type: 'string' },
      'first-ms': { type: 'string' },
      'idle-s': { type: 'string' },
      'ramp-s': { type: 'string' },
    },
  });
  return {
    baseUrl: values.url ?? '',
    concurrency: Number(values.concurrency),
    tokens: Number(values.tokens),
    durationS: Number(values['duration-s']),
    gapMs: Number(values['gap-ms']),
    firstMs: Number(values['first-ms']),
    ...(values['idle-s'] !== undefined && { idleS: Number(values['idle-s']) }),
    ...(values['ramp-s'] !== undefined && { rampS: Number(values['ramp-s']) }),
  };
}

/** The streamed chat request body every comparison client sends. */
export function chatBody(tokens: number): string {
  return JSON.stringify({
    model: 'paced',
    max_tokens: tokens,
    stream: true,
    stream_options: { include_usage: true },
    ignore_eos: true,
    messages: [{ role: 'user', content: Array.from({ length: INPUT_TOKENS }, () => 'the').join(' ') }],
  });
}
