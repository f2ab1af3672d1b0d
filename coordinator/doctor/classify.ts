// Pure: what the doctor's observations mean for a run. Each finding is said the way a user can act
// on it — what was seen, and what loadfleet will do about it (or what to change) — and the report
// says whether the endpoint can be loaded at all. No I/O here; probes.ts makes the calls.

import { parseExposition } from '../../figures/server/prom-parse.js';
import { pathFor } from '../../shared/apis/contract.js';
import { apiModule } from '../../shared/apis/registry.js';
import type { PromptLengthMethod } from '../../shared/plan.js';
import { errorText, modelIds, readApiAnswer, streamEnd } from './answers.js';
import type { Exchange } from './http.js';
import type { ApiName, ApiTry, Observations } from './probes.js';
import { probeBody } from './probes.js';

export const DOCTOR_SCHEMA = 'loadfleet.doctor/v1';

export type { ApiName };

/** What one API did with a probe request. */
export interface ApiReport {
  /** A 200 answer came. */
  reachable: boolean;
  /** The answer was an SSE stream with content (or reasoning) ending in its end ([DONE], or message_stop for the Messages API). */
  streams: boolean;
  http_status: number | null;
  first_byte_ms: number | null;
  content_chunks: number;
  reasoning_chunks: number;
  reasoning_fields: string[];
  /** `streamed`: a usage object arrived when asked with `stream_options`; `not_sent`: it did not. */
  usage: 'streamed' | 'not_sent' | null;
  stream_options: Record<string, unknown> | null;
  /** Whether the server took `ignore_eos: true` (null when no answer came). */
  ignore_eos: 'accepted' | 'refused' | null;
  detail: string;
}

/** One metrics endpoint and the families of serving metrics it exposes. */
export interface MetricsReport {
  url: string;
  ok: boolean;
  /** Serving stacks recognised by metric name prefix: vLLM, SGLang, llama.cpp, gateway (Inference Extension / llm-d EPP), TGI. */
  stacks: string[];
  metric_families: number;
  detail: string;
}

/** The doctor's whole answer (`--json` prints it as is). */
export interface DoctorReport {
  schema: typeof DOCTOR_SCHEMA;
  base_url: string;
  model: string | null;
  loadable: boolean;
  /** One sentence: can loadfleet load this endpoint, and how. */
  verdict: string;
  /** Why it cannot be loaded (empty when it can). */
  problems: string[];
  /** What will differ from a fully featured vLLM endpoint, and what to set for it. */
  notes: string[];
  auth: { api_key_env: string | null; key_set: boolean };
  models: { ok: boolean; served: string[]; max_model_len: number | null; detail: string };
  apis: Record<ApiName, ApiReport | null>;
  /** The API a plan should use: the first probed API (registry order: chat, completions, the Messages API…) that streams; null when none does. */
  preferred_api: ApiName | null;
  tokenize: {
    dialect: 'vLLM/SGLang' | 'llama.cpp' | null;
    probe_tokens: number | null;
    prompt_length_method: PromptLengthMethod;
    detail: string;
  } | null;
  metrics: MetricsReport[];
  requests_made: number;
  definitions: Record<string, string>;
}

const DEFINITIONS: Record<string, string> = {
  requests_made: 'HTTP requests this doctor session sent to the endpoint (every call, tokenize and metrics included).',
  first_byte_ms:
    'Milliseconds from sending a probe request to the first bytes of its answer, on this machine (one request: a sign of life, not a latency figure).',
  content_chunks: 'Stream events of the probe answer whose delta carried visible text.',
  reasoning_chunks: 'Stream events of the probe answer whose delta carried reasoning text (under reasoning_fields).',
  probe_tokens: 'Tokens the endpoint counted for the probe prompt as one whole request (chat template included for chat).',
  max_model_len: "The model's context length as /models states it (vLLM's max_model_len); null when not stated.",
  metric_families: 'Distinct metric families in the endpoint’s Prometheus exposition.',
};

function maxModelLen(body: string, model: string | null): number | null {
  try {
    const data = (JSON.parse(body) as { data?: Array<Record<string, unknown>> }).data ?? [];
    const card = data.find((m) => m.id === model) ?? data[0];
    const len = card?.max_model_len ?? card?.context_length;
    return typeof len === 'number' && len > 0 ? len : null;
  } catch {
    return null;
  }
}

/** Names a failed call the way a user can act on it. */
export function unreachable(ex: Exchange, timeoutMs: number): string {
  const f = ex.failure!;
  const url = new URL(ex.url);
  const where = `${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`;
  switch (f.kind) {
    case 'refused':
      return `nothing listens at ${where} (connection refused): is the server up, and is the port right?`;
    case 'dns':
      return `the host name ${url.hostname} does not resolve (${f.code}): check the spelling, or this machine's DNS`;
    case 'timeout':
      return `no answer from ${where} within ${Math.round(timeoutMs / 1000)} s (${f.code}): a firewall, a wrong address, or a server too busy to answer`;
    case 'tls':
      return `TLS failed with ${where} (${f.code}): ${tlsHint(f.code, f.message, url.protocol)}`;
    case 'closed':
      return url.protocol === 'http:'
        ? `${where} closed the connection without an answer (${f.code}); if it serves HTTPS, use https://`
        : `${where} closed the connection without an answer (${f.code}: ${firstLine(f.message)})`;
    default:
      return `no answer from ${where} (${f.code}: ${firstLine(f.message)})`;
  }
}

function tlsHint(code: string, message: string, protocol: string): string {
  if (/WRONG_VERSION_NUMBER|packet length too long|EPROTO/i.test(`${code} ${message}`) && protocol === 'https:')
    return 'the server does not speak TLS on this port: use http://';
  if (/SELF_SIGNED|UNABLE_TO_(VERIFY|GET)|DEPTH_ZERO/.test(code))
    return 'its certificate is not signed by a CA this machine trusts: give Node the CA with NODE_EXTRA_CA_CERTS=ca.pem (on every agent too)';
  if (/ALTNAME/.test(code)) return 'the certificate does not name this host: use the host name it was issued for';
  if (/EXPIRED/.test(code)) return 'the certificate has expired';
  return `check the certificate and the scheme (${firstLine(message)})`;
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.trim().slice(0, 200);
}

function authProblem(ex: Exchange, o: Observations): string {
  const said = ex.body ? `: ${serverMessage(ex.body)}` : '';
  const why = !o.apiKeyEnv
    ? 'no API key was sent: pass --api-key-env VAR with the key in $VAR (plans name it as target.api_key_env)'
    : o.keySet
      ? `the key in $${o.apiKeyEnv} was refused`
      : `$${o.apiKeyEnv} is not set in this environment, so no key was sent`;
  return `the server refused the request (HTTP ${ex.status}${said}) — ${why}`;
}

function serverMessage(body: string): string {
  try {
    const b = JSON.parse(body) as { error?: unknown; message?: unknown; detail?: unknown };
    if (b.error !== undefined) return errorText(b.error).slice(0, 200);
    if (typeof b.message === 'string') return b.message.slice(0, 200);
    if (typeof b.detail === 'string') return b.detail.slice(0, 200);
  } catch {
    // not JSON: the text itself
  }
  return body.trim().slice(0, 200);
}

/** What one API's probe showed. */
export function apiReport(api: ApiName, t: ApiTry, timeoutMs: number, model = ''): ApiReport {
  const ex = t.withoutIgnoreEos ?? t.first;
  const ignoreEos = t.withoutIgnoreEos ? 'refused' : t.first.status === 200 ? 'accepted' : null;
  const base: ApiReport = {
    reachable: ex.status === 200,
    streams: false,
    http_status: ex.status,
    first_byte_ms: ex.firstByteMs === null ? null : Math.round(ex.firstByteMs * 10) / 10,
    content_chunks: 0,
    reasoning_chunks: 0,
    reasoning_fields: [],
    usage: null,
    stream_options: null,
    ignore_eos: ignoreEos,
    detail: '',
  };
  // The API's own adapter builds the probe and reads the answer (its end: [DONE], message_stop, …).
  const adapter = apiModule(api).adapter({ batchSize: 1 });
  const path = pathFor(adapter.path, model);
  const end = streamEnd(adapter);
  if (ex.failure) return { ...base, detail: `${path}: ${unreachable(ex, timeoutMs)}` };
  if (ex.status !== 200) return { ...base, detail: `${path} answered HTTP ${ex.status}: ${serverMessage(ex.body)}` };
  const f = readApiAnswer(adapter, ex.body);
  const streamOptions = probeBody(api, model || 'model', true)['stream_options'];
  const out: ApiReport = {
    ...base,
    content_chunks: f.contentChunks,
    reasoning_chunks: f.reasoningChunks,
    reasoning_fields: f.reasoningFields,
    usage: f.usage ? 'streamed' : 'not_sent',
    stream_options: typeof streamOptions === 'object' && streamOptions !== null ? (streamOptions as { include_usage: boolean }) : null,
  };
  if (f.error) return { ...out, detail: `${path} sent an error inside its answer: ${f.error}` };
  if (!f.streamed) return { ...out, detail: `${path} answered with one JSON body, not a stream: loadfleet measures streamed answers only` };
  if (f.garbled > 0)
    return { ...out, detail: `${path} streamed ${f.garbled} event(s) that are not JSON: loadfleet would fail those requests` };
  if (!f.done)
    return { ...out, detail: `${path} streamed but ended without ${end}: loadfleet counts such a stream as incomplete (a failure)` };
  if (f.contentChunks + f.reasoningChunks === 0) return { ...out, detail: `${path} streamed no text in ${f.events} events` };
  return {
    ...out,
    streams: true,
    detail: `${path} streams (${f.contentChunks} content events${f.reasoningChunks ? `, ${f.reasoningChunks} reasoning` : ''}, ending in ${end})`,
  };
}

/** The serving stacks a metrics exposition comes from, by metric name prefix. */
export function metricStacks(names: Iterable<string>): string[] {
  const found = new Set<string>();
  for (const n of names) {
    if (n.startsWith('vllm:')) found.add('vLLM');
    else if (n.startsWith('sglang:')) found.add('SGLang');
    else if (n.startsWith('llamacpp:')) found.add('llama.cpp');
    else if (/^(llm_d_epp_|inference_extension_|inference_pool_|inference_objective_|inference_model_)/.test(n)) found.add('gateway');
    else if (n.startsWith('tgi_')) found.add('TGI');
  }
  return ['vLLM', 'SGLang', 'llama.cpp', 'TGI', 'gateway'].filter((s) => found.has(s));
}

function metricsReport(ex: Exchange, timeoutMs: number): MetricsReport {
  const base = { url: ex.url, ok: false, stacks: [] as string[], metric_families: 0 };
  if (ex.failure) return { ...base, detail: unreachable(ex, timeoutMs) };
  if (ex.status !== 200) return { ...base, detail: `HTTP ${ex.status}` };
  const parsed = parseExposition(ex.body);
  const names = new Set([...parsed.types.keys(), ...parsed.samples.map((s) => s.name)]);
  if (parsed.samples.length === 0) return { ...base, detail: 'answered, but not with Prometheus metrics' };
  const stacks = metricStacks(names);
  const families = new Set([...parsed.types.keys()]).size || names.size;
  const read = stacks.filter((s) => s === 'vLLM' || s === 'gateway');
  const detail =
    stacks.length === 0
      ? `${families} metric families, none of a serving stack loadfleet knows: scraped snapshots only`
      : read.length > 0
        ? `${stacks.join(' + ')} metrics: run.json's server figures read the ${read.join(' and ')} ones`
        : `${stacks.join(' + ')} metrics: kept in the run's scrape snapshots; run.json's server figures read vLLM's and a gateway's names only`;
  return { ...base, ok: true, stacks, metric_families: families, detail };
}

/** The whole report from what the probes saw. */
export function classify(o: Observations, timeoutMs: number): DoctorReport {
  const problems: string[] = [];
  const notes: string[] = [];
  const served = modelIds(o.models.body);
  const models = {
    ok: o.models.status === 200 && served.length > 0,
    served,
    max_model_len: maxModelLen(o.models.body, o.model),
    detail: '',
  };
  if (o.models.failure) {
    models.detail = unreachable(o.models, timeoutMs);
    problems.push(models.detail);
  } else if (o.models.status === 401 || o.models.status === 403) {
    models.detail = authProblem(o.models, o);
    problems.push(models.detail);
  } else if (o.models.status !== 200) {
    models.detail = `${o.baseUrl}/models answered HTTP ${o.models.status}${new URL(o.baseUrl).pathname.endsWith('/v1') ? '' : ' (the base URL usually ends in /v1)'}`;
  } else models.detail = served.length > 0 ? `serves ${served.join(', ')}` : '/models answered without a model list';
  if (o.apiKeyEnv && !o.keySet) notes.push(`$${o.apiKeyEnv} is not set here: agents need it set where they run`);
  if (problems.length === 0 && o.model === null)
    problems.push(`no model to ask for: ${o.models.status === 200 ? '/models listed none' : 'no /models list'}; pass --model NAME`);

  // In the order probed (the registry's): the OpenAI-compatible APIs first, every serving stack has them.
  const order = Object.keys(o.apis);
  const apis: Record<ApiName, ApiReport | null> = Object.fromEntries(
    order.map((a) => [a, o.apis[a] ? apiReport(a, o.apis[a], timeoutMs, o.model ?? '') : null]),
  );
  const preferred = order.find((a) => apis[a]?.streams) ?? null;
  const tried = order.map((a) => apis[a]).filter((a): a is ApiReport => a !== null && a !== undefined);
  if (problems.length === 0 && preferred === null) {
    const auth = order.map((a) => o.apis[a]?.first).find((e) => e?.status === 401 || e?.status === 403);
    problems.push(auth ? authProblem(auth, o) : `no API streams: ${tried.map((a) => a.detail).join('; ')}`);
  }
  const used = preferred ? apis[preferred]! : null;
  if (used) {
    if (used.usage === 'not_sent')
      notes.push(
        'streams carry no usage even with stream_options.include_usage: requests still count as ok (TTFT and e2e need no usage); output tokens are counted from the stream — exact with target.tokenizer set to the model’s tokenizer.json, else estimated from chunks (then no TPOT)',
      );
    if (used.ignore_eos === 'refused')
      notes.push('the server refuses ignore_eos: set prompt.ignore_eos: false in every class (answers may then stop before output_tokens)');
    if (used.reasoning_fields.length > 0)
      notes.push(
        `reasoning streams as delta.${used.reasoning_fields.join(' and delta.')}: loadfleet times it (ttfo = first reasoning or content; ttft = first content; visible_generation)`,
      );
    const completions = apis['completions'];
    if (preferred === 'chat' && completions && !completions.streams)
      notes.push(`completions does not stream (${completions.detail}): plans use api: chat`);
    if (preferred === 'anthropic') notes.push('only the Anthropic Messages API streams here: plans use api: anthropic');
    else if (preferred !== order[0] && preferred !== 'completions')
      notes.push(`only ${preferred} streams here: plans use api: ${preferred}`);
  }

  let tokenize: DoctorReport['tokenize'] = null;
  if (o.tokenize) {
    const dialect = !o.tokenize.found ? null : /llama\.cpp/.test(o.tokenize.note) ? 'llama.cpp' : 'vLLM/SGLang';
    tokenize = {
      dialect,
      probe_tokens: o.tokenize.probeTokens,
      prompt_length_method: dialect ? 'server-tokenize' : 'words-unverified',
      detail: o.tokenize.note,
    };
    if (!dialect)
      notes.push(
        'no tokenize endpoint: prompts are sized at one filler word per token (words-unverified) unless target.tokenizer names the model’s tokenizer.json; request_shape then rests on the server’s usage.prompt_tokens',
      );
  }

  const metrics = o.metrics.map((m) => metricsReport(m, timeoutMs));
  if (o.metrics.length > 0 && !metrics.some((m) => m.ok && m.stacks.length > 0))
    notes.push(
      'no serving metrics found: the run has no server figures (running/waiting, KV cache, gateway queue); name the endpoints with --metrics URL',
    );

  const loadable = problems.length === 0;
  const verdict = loadable
    ? `loadable: ${preferred} streams from ${o.model}${tokenize?.dialect ? `, prompts sized by its /tokenize (${tokenize.dialect})` : ''}${used?.usage === 'streamed' ? ', usage streamed' : ''}`
    : `cannot be loaded: ${problems[0]}`;
  return {
    schema: DOCTOR_SCHEMA,
    base_url: o.baseUrl,
    model: o.model,
    loadable,
    verdict,
    problems,
    notes,
    auth: { api_key_env: o.apiKeyEnv, key_set: o.keySet },
    models,
    apis,
    preferred_api: preferred,
    tokenize,
    metrics,
    requests_made: o.requests,
    definitions: DEFINITIONS,
  };
}
