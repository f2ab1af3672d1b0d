// The HTTP front of the simulator: routes, per-request fault choice, and `startSim()` for
// programmatic use (tests, the coordinator's embedded default target).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GenerationRequest, SimGenerationApi, SimPoolingApi } from './apis/contract.js';
import { API_BY_PATH } from './apis/registry.js';
import { type FaultKind, isFaultKind, NO_FAULT_HEADER_VALUE, pickFault } from './faults.js';
import { admit, flowHeaders } from './gateway-http.js';
import { serveGeneration } from './generate.js';
import { readBody, sendError, sendJson } from './http.js';
import { blockHashes } from './kv-cache.js';
import { LoraSlots } from './lora.js';
import { family, labelled, type MetricFamily, processStartFamily, renderFamilies } from './metrics.js';
import { ApiError, parseGenerationRequest, parseJsonObject, parseTokenizeRequest } from './openai.js';
import { type ResolvedSimOptions, resolveSimOptions, type SimOptions } from './options.js';
import { buildPool, type SimPool } from './pool.js';
import { servePooling } from './prefill-job.js';
import { traceRequest } from './request-trace.js';
import { tokenIds } from './tokenizer.js';
import type { SpanSink } from './tracing.js';
import { forward } from './upstream.js';

/** A running simulator. */
export interface SimServer {
  /** `http://host:port`, without a trailing slash. */
  url: string;
  port: number;
  /** Where the replicas' vLLM metrics alone are (absent in front of a real upstream). */
  vllmMetricsUrl: string | undefined;
  /** Where the gateway's llm-d metrics alone are (gateway mode only). */
  eppMetricsUrl: string | undefined;
  /** Stops listening, ends every open response and stops the engines. */
  close(): Promise<void>;
}

interface SimState {
  options: ResolvedSimOptions;
  pool: SimPool;
  startTimeS: number;
  faults: Map<string, number>;
  /** Generation requests seen so far: the arrival index of the fault PRNG. */
  arrivals: number;
  /** Prefix-cache resets answered (loadfleet_sim_prefix_cache_resets_total). */
  cacheResets: number;
  /** The LoRA adapter table (none without --lora-modules). */
  lora: LoraSlots | undefined;
  /** Where finished requests' spans go (none without --otlp-traces-endpoint). */
  spans: SpanSink | undefined;
}

type Handler = (req: IncomingMessage, res: ServerResponse, state: SimState) => void | Promise<void>;

const ROUTES: Record<string, Record<string, Handler>> = {
  '/health': {
    GET: (_req, res) => {
      res.writeHead(200).end();
    },
  },
  '/v1/models': { GET: models },
  // Everything in one text; the split paths let a scraper keep engine and gateway apart.
  '/metrics': { GET: (_req, res, state) => sendMetrics(res, state, [...replicaFamilies(state), ...state.pool.gatewayFamilies()]) },
  '/vllm/metrics': { GET: (_req, res, state) => sendMetrics(res, state, replicaFamilies(state, true)) },
  '/epp/metrics': { GET: (_req, res, state) => sendMetrics(res, state, gatewayFamilies(state)) },
  '/tokenize': { POST: tokenize },
  // vLLM's and SGLang's cache resets, for a load generator's clean start between runs.
  '/reset_prefix_cache': { POST: (req, res, state) => resetCache('/reset_prefix_cache', req, res, state) },
  '/flush_cache': { POST: (req, res, state) => resetCache('/flush_cache', req, res, state) },
  // Every API's paths (apis/registry.ts).
  ...Object.fromEntries(
    [...API_BY_PATH].map(([path, api]): [string, Record<string, Handler>] => [
      path,
      {
        POST: (req, res, state) => (api.kind === 'generation' ? generate(api, req, res, state) : pooling(api, req, res, state)),
      },
    ]),
  ),
};

/** Starts a simulator; resolves once it listens. Throws SimOptionsError for invalid options. */
export async function startSim(input: SimOptions = {}): Promise<SimServer> {
  const options = resolveSimOptions(input);
  const startTimeS = Date.now() / 1000;
  // The OpenTelemetry SDK is loaded only when spans are asked for.
  const spans =
    options.otlpTracesEndpoint === '' ? undefined : await (await import('./tracing.js')).startTracing(options.otlpTracesEndpoint);
  const state: SimState = {
    options,
    pool: buildPool(options, undefined, startTimeS),
    startTimeS,
    faults: new Map(),
    arrivals: 0,
    cacheResets: 0,
    lora:
      options.loraModules.length > 0 ? new LoraSlots(options.loraModules, options.maxLoras, options.loraLoadMs, options.model) : undefined,
    spans,
  };
  // Idle keep-alive sockets stay open 65 s (Node's default is 5 s) so a load generator's pooled
  // connections are not closed under it between requests, which would show up as spurious resets.
  const server = createServer({ noDelay: true, keepAliveTimeout: 65_000 }, (req, res) => dispatch(req, res, state));
  await listen(server, options.port, options.host);
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `http://${host}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    vllmMetricsUrl: options.upstream === '' ? `${url}/vllm/metrics` : undefined,
    eppMetricsUrl: options.gateway ? `${url}/epp/metrics` : undefined,
    close: () => {
      // Pending spans are sent before the simulator is reported closed.
      closing ??= shutdown(server, state.pool).then(() => spans?.shutdown());
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

function shutdown(server: Server, pool: SimPool): Promise<void> {
  pool.stop();
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
    if (!route) throw notFound(req, path);
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

function notFound(req: IncomingMessage, path: string): ApiError {
  return new ApiError(404, `Route ${req.method} ${path} not found`, 'invalid_request_error', 'not_found');
}

async function models(req: IncomingMessage, res: ServerResponse, { options }: SimState): Promise<void> {
  if (options.upstream !== '') return forward(options.upstream, '/v1/models', req, res, undefined);
  const card = { id: options.model, object: 'model', created: 0, owned_by: 'loadfleet', max_model_len: options.maxModelLen };
  // vLLM lists each LoRA adapter as a model whose parent is the base model.
  const loras = options.loraModules.map((id) => ({ ...card, id, root: id, parent: options.model }));
  sendJson(res, 200, { object: 'list', data: [card, ...loras] });
}

function replicaFamilies(state: SimState, alone = false): MetricFamily[] {
  if (alone && state.options.upstream !== '')
    throw new ApiError(404, 'No simulated replicas: the gateway forwards upstream', 'invalid_request_error', 'not_found');
  const m = `model_name="${state.options.model}"`;
  const faults = family('loadfleet_sim_faults_injected_total', 'counter', 'Faults injected.', [
    ...labelled('loadfleet_sim_faults_injected_total', m, 'fault', Object.fromEntries(state.faults)),
  ]);
  const resets = family(
    'loadfleet_sim_prefix_cache_resets_total',
    'counter',
    'Prefix-cache resets answered (/reset_prefix_cache, /flush_cache).',
    [`loadfleet_sim_prefix_cache_resets_total{${m}} ${state.cacheResets}`],
  );
  return [...state.pool.replicaFamilies(), faults, resets, ...(state.lora?.families() ?? [])];
}

function gatewayFamilies(state: SimState): MetricFamily[] {
  if (!state.pool.gateway) throw new ApiError(404, 'No gateway: start engine-sim with --gateway', 'invalid_request_error', 'not_found');
  return state.pool.gatewayFamilies();
}

function sendMetrics(res: ServerResponse, state: SimState, families: MetricFamily[]): void {
  const text = renderFamilies([...families, processStartFamily(state.startTimeS)]);
  res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text);
}

// Every replica forgets its cached prefixes (vLLM answers 200 with no body; SGLang a line of text).
async function resetCache(path: string, req: IncomingMessage, res: ServerResponse, state: SimState): Promise<void> {
  const raw = await readBody(req);
  if (state.options.upstream !== '') return forward(state.options.upstream, path, req, res, raw);
  for (const engine of state.pool.engines) engine.resetPrefixCache?.();
  state.cacheResets++;
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(path === '/flush_cache' ? 'Cache flushed.\n' : '');
}

async function tokenize(req: IncomingMessage, res: ServerResponse, { options }: SimState): Promise<void> {
  const raw = await readBody(req);
  if (options.upstream !== '') return forward(options.upstream, '/tokenize', req, res, raw);
  const tokens = parseTokenizeRequest(parseJsonObject(raw), options);
  sendJson(res, 200, { count: tokens.length, max_model_len: options.maxModelLen, tokens });
}

async function generate(api: SimGenerationApi, req: IncomingMessage, res: ServerResponse, state: SimState): Promise<void> {
  const raw = await readBody(req);
  const { options, pool } = state;
  // In front of a real server its own validation answers; here only the simulated replicas validate.
  const body = options.upstream === '' ? parseJsonObject(raw) : undefined;
  const request = body ? parseGenerationRequest(api, body, options) : undefined;
  const explicitPriority = headerPriority(req);
  const fault = chooseFault(req, state);
  if (fault) state.faults.set(fault, (state.faults.get(fault) ?? 0) + 1);
  if (fault === '429' || fault === '5xx') {
    refuse(res, fault);
    return;
  }
  const { objective, fairnessId } = flowHeaders(req.headers);
  const band = pool.priorityOf(objective);
  const simulate = request ? simulated(request, req, res, state, fault, explicitPriority ?? band) : undefined;
  // A request naming a LoRA adapter reaches the engine once its adapter is loaded (lora.ts).
  const adapter = typeof body?.['model'] === 'string' && state.lora?.has(body['model']) ? body['model'] : undefined;
  const serve = simulate
    ? adapter
      ? () => res.on('close', state.lora!.acquire(adapter, simulate))
      : simulate
    : () => void forward(options.upstream, req.url ?? '', req, res, raw);
  if (pool.gateway) admit(pool.gateway, res, { fairnessId, priority: band, bytes: Buffer.byteLength(raw) }, serve);
  else serve();
}

// Embeddings and rerank share the generation engines (apis/openai-embeddings.ts, apis/rerank.ts
// say how they are charged); refusal faults apply as to generation, stream faults have nothing to act on.
async function pooling(api: SimPoolingApi, req: IncomingMessage, res: ServerResponse, state: SimState): Promise<void> {
  const raw = await readBody(req);
  const { options, pool } = state;
  if (options.upstream !== '') return forward(options.upstream, req.url ?? '', req, res, raw);
  const request = api.read(parseJsonObject(raw), options);
  const fault = chooseFault(req, state);
  if (fault === '429' || fault === '5xx') {
    state.faults.set(fault, (state.faults.get(fault) ?? 0) + 1);
    refuse(res, fault);
    return;
  }
  const { objective, fairnessId } = flowHeaders(req.headers);
  const band = pool.priorityOf(objective);
  const serve = (): void =>
    servePooling(
      pool.pick(),
      request,
      headerPriority(req) ?? band,
      () => sendJson(res, 200, request.answer()),
      (cb) => res.on('close', cb),
    );
  if (pool.gateway) admit(pool.gateway, res, { fairnessId, priority: band, bytes: Buffer.byteLength(raw) }, serve);
  else serve();
}

// Serving on a simulated replica, picked when the request is dispatched (not when it arrives).
function simulated(
  request: GenerationRequest,
  req: IncomingMessage,
  res: ServerResponse,
  state: SimState,
  fault: FaultKind | undefined,
  priority: number,
): () => void {
  const { options, pool } = state;
  const seq = state.arrivals.toString(36).padStart(6, '0');
  const who = {
    id: `${request.api.idPrefix}-sim${seq}`,
    created: Math.floor(Date.now() / 1000),
    model: options.model,
  };
  const blockHashesOf = options.enablePrefixCaching && options.engine === 'vllm' ? blockHashes(tokenIds(request.promptText)) : undefined;
  const { reasoningTokens, stallMs } = options;
  return () => {
    const trace = state.spans ? traceRequest(state.spans, req, res, request, who) : undefined;
    serveGeneration({
      res,
      engine: pool.pick(),
      request,
      who,
      fault,
      priority,
      blockHashes: blockHashesOf,
      reasoningTokens,
      stallMs,
      trace,
    });
  };
}

// `x-sim-priority` sets the engine's scheduling priority directly (it wins over the gateway band).
function headerPriority(req: IncomingMessage): number | undefined {
  const header = req.headers['x-sim-priority'];
  if (typeof header !== 'string') return undefined;
  const value = Number(header);
  if (!Number.isInteger(value))
    throw new ApiError(
      400,
      `x-sim-priority must be an integer, got '${header}'`,
      'invalid_request_error',
      'invalid_value',
      'x-sim-priority',
    );
  return value;
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
