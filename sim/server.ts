// The HTTP front of the simulator: routes, per-request fault choice, and `startSim()` for
// programmatic use (tests, the coordinator's embedded default target).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Engine } from './engine.js';
import { type FaultKind, isFaultKind, NO_FAULT_HEADER_VALUE, pickFault } from './faults.js';
import { serveGeneration } from './generate.js';
import { readBody, sendError, sendJson } from './http.js';
import { SimMetrics } from './metrics.js';
import { ApiError, type Endpoint, parseGenerationRequest, parseJsonObject, parseTokenizeRequest } from './openai.js';
import { type ResolvedSimOptions, resolveSimOptions, type SimOptions } from './options.js';

/** A running simulator. */
export interface SimServer {
  /** `http://host:port`, without a trailing slash. */
  url: string;
  port: number;
  /** Stops listening, ends every open response and stops the engine. */
  close(): Promise<void>;
}

interface SimState {
  options: ResolvedSimOptions;
  engine: Engine;
  metrics: SimMetrics;
  /** Generation requests seen so far: the arrival index of the fault PRNG. */
  arrivals: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse, state: SimState) => void | Promise<void>;

const ROUTES: Record<string, Record<string, Handler>> = {
  '/health': {
    GET: (_req, res) => {
      res.writeHead(200).end();
    },
  },
  '/v1/models': { GET: models },
  '/metrics': { GET: metrics },
  '/tokenize': { POST: tokenize },
  '/v1/chat/completions': { POST: (req, res, state) => generate('chat', req, res, state) },
  '/v1/completions': { POST: (req, res, state) => generate('completions', req, res, state) },
};

/** Starts a simulator; resolves once it listens. Throws SimOptionsError for invalid options. */
export async function startSim(input: SimOptions = {}): Promise<SimServer> {
  const options = resolveSimOptions(input);
  const metrics = new SimMetrics(options.model, Date.now() / 1000);
  const state: SimState = { options, metrics, engine: new Engine(options, metrics), arrivals: 0 };
  // Idle keep-alive sockets stay open 65 s (Node's default is 5 s) so a load generator's pooled
  // connections are not closed under it between requests, which would show up as spurious resets.
  const server = createServer({ noDelay: true, keepAliveTimeout: 65_000 }, (req, res) => dispatch(req, res, state));
  await listen(server, options.port, options.host);
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () => {
      closing ??= shutdown(server, state.engine);
      return closing;
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function shutdown(server: Server, engine: Engine): Promise<void> {
  engine.stop();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

async function dispatch(req: IncomingMessage, res: ServerResponse, state: SimState): Promise<void> {
  const requestId = req.headers['x-request-id'];
  if (typeof requestId === 'string') res.setHeader('x-request-id', requestId);
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const route = ROUTES[path];
  try {
    if (!route) throw new ApiError(404, `Route ${req.method} ${path} not found`, 'invalid_request_error', 'not_found');
    const handler = route[req.method ?? ''];
    if (!handler) {
      res.setHeader('allow', Object.keys(route).join(', '));
      throw new ApiError(405, `Method ${req.method} not allowed on ${path}`, 'invalid_request_error', 'method_not_allowed');
    }
    await handler(req, res, state);
  } catch (err) {
    sendError(res, err instanceof ApiError ? err : new ApiError(500, `Internal error: ${(err as Error).message}`, 'server_error'));
  }
}

function models(_req: IncomingMessage, res: ServerResponse, { options }: SimState): void {
  const card = { id: options.model, object: 'model', created: 0, owned_by: 'loadfleet', max_model_len: options.maxModelLen };
  sendJson(res, 200, { object: 'list', data: [card] });
}

function metrics(_req: IncomingMessage, res: ServerResponse, state: SimState): void {
  const text = state.metrics.render({ running: state.engine.runningCount, waiting: state.engine.waitingCount });
  res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text);
}

async function tokenize(req: IncomingMessage, res: ServerResponse, { options }: SimState): Promise<void> {
  const tokens = parseTokenizeRequest(parseJsonObject(await readBody(req)), options);
  sendJson(res, 200, { count: tokens.length, max_model_len: options.maxModelLen, tokens });
}

async function generate(endpoint: Endpoint, req: IncomingMessage, res: ServerResponse, state: SimState): Promise<void> {
  const request = parseGenerationRequest(endpoint, parseJsonObject(await readBody(req)), state.options);
  const fault = chooseFault(req, state);
  if (fault) state.metrics.countFault(fault);
  if (fault === '429' || fault === '5xx') {
    refuse(res, fault);
    return;
  }
  const seq = state.arrivals.toString(36).padStart(6, '0');
  const who = {
    endpoint,
    id: `${endpoint === 'chat' ? 'chatcmpl' : 'cmpl'}-sim${seq}`,
    created: Math.floor(Date.now() / 1000),
    model: state.options.model,
  };
  const { engine, options } = state;
  serveGeneration({ res, engine, request, who, fault, reasoningTokens: options.reasoningTokens, stallMs: options.stallMs });
}

// The two refusals a gateway or an overloaded engine answers with before any generation.
function refuse(res: ServerResponse, fault: '429' | '5xx'): void {
  if (fault === '5xx') {
    sendError(res, new ApiError(503, 'Service unavailable (injected fault)', 'server_error', 'service_unavailable'));
    return;
  }
  const err = new ApiError(429, 'Request dropped: queue full (injected fault)', 'rate_limit_error', 'queue_full');
  sendError(res, err, { 'retry-after': '1', 'x-llm-d-request-dropped-reason': 'queue-full' });
}

// The header (when allowed) overrides the seeded draw; the draw's index advances either way so
// forcing one request's fault does not reshuffle the others'.
function chooseFault(req: IncomingMessage, state: SimState): FaultKind | undefined {
  const index = state.arrivals++;
  const header = req.headers['x-sim-fault'];
  if (state.options.allowFaultHeader && typeof header === 'string') {
    const value = header.trim().toLowerCase();
    if (value === NO_FAULT_HEADER_VALUE) return undefined;
    if (isFaultKind(value)) return value;
    throw new ApiError(400, `Unknown x-sim-fault '${header}'`, 'invalid_request_error', 'invalid_value', 'x-sim-fault');
  }
  return pickFault(state.options.faults, state.options.faultSeed, index);
}
