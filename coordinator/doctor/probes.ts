// The doctor's few requests, in order, each bounded by a deadline: the models list, one short
// streamed request per API whose descriptor asks for a probe (the shared/apis/ registry: chat,
// completions and the Anthropic Messages API, each with its own key header and path), its body
// built by that API's own adapter (again without ignore_eos if the server refuses it), the tokenize
// dialect (coordinator/calibrate's own detection, called as a run would call it), and the metrics
// endpoints. At most DOCTOR_MAX_REQUESTS calls; an endpoint that cannot be reached, or that
// refuses the key, stops the session after the first call. What the answers mean is classify.ts.
import { pathFor } from '../../shared/apis/contract.js';
import { apiDescriptors, apiModule } from '../../shared/apis/registry.js';
import type { ApiKind } from '../../shared/plan.js';
import { serverCounter, serverRoot } from '../calibrate/server-tokenize.js';
import { modelIds } from './answers.js';
import type { Exchange } from './http.js';
import { call, doctorDispatcher } from './http.js';

/** An API's name in the registry (shared/apis/); each probed API's answer is read by its own adapter. */
export type ApiName = string;

/** The APIs the doctor probes, in the registry's order (their descriptors ask for it): read when it probes. */
export function probedApis() {
  return apiDescriptors().filter((d) => d.doctorProbe);
}

/** The most calls one doctor session makes besides one per extra metrics URL (models 1, each probed API × 2, tokenize 5, metrics 1). */
export function doctorMaxRequests(): number {
  return 1 + 2 * probedApis().length + 5 + 1;
}

/** The same, for the APIs of this build (the help text). */
export const DOCTOR_MAX_REQUESTS = doctorMaxRequests();

/** Output tokens asked of each probe request: enough to see reasoning give way to content. */
export const PROBE_MAX_TOKENS = 24;

/** The prompt of each probe request, and the text the tokenize dialect is probed with. */
export const PROBE_PROMPT = 'Reply with one short sentence about the sea.';

export interface DoctorInput {
  baseUrl: string;
  model?: string;
  apiKeyEnv?: string;
  /** Extra Prometheus endpoints to look at (a gateway's EPP, model servers behind a gateway). */
  metricsUrls: readonly string[];
  headers: Record<string, string>;
  timeoutMs: number;
}

/** One probe request per API, and its retry without ignore_eos when that was refused. */
export interface ApiTry {
  first: Exchange;
  withoutIgnoreEos: Exchange | null;
}

/** Everything the doctor saw; pure functions turn it into the report. */
export interface Observations {
  baseUrl: string;
  root: string;
  apiKeyEnv: string | null;
  keySet: boolean;
  models: Exchange;
  /** The model the probes asked for: --model, else the first one served; null when neither. */
  model: string | null;
  apis: Record<ApiName, ApiTry | null>;
  tokenize: { found: boolean; note: string; probeTokens: number | null } | null;
  metrics: Exchange[];
  requests: number;
}

/** Runs the probes against `input.baseUrl`. */
export async function observe(input: DoctorInput): Promise<Observations> {
  const dispatcher = doctorDispatcher();
  const key = input.apiKeyEnv ? process.env[input.apiKeyEnv] : undefined;
  const headers: Record<string, string> = { ...input.headers, ...(key ? { authorization: `Bearer ${key}` } : {}) };
  const root = serverRoot(input.baseUrl);
  const get = (url: string): Promise<Exchange> => call(url, { timeoutMs: input.timeoutMs, headers }, dispatcher);
  const obs: Observations = {
    baseUrl: input.baseUrl,
    root,
    apiKeyEnv: input.apiKeyEnv ?? null,
    keySet: key !== undefined && key !== '',
    models: await get(`${input.baseUrl}/models`),
    model: null,
    apis: Object.fromEntries(probedApis().map((d) => [d.name, null])),
    tokenize: null,
    metrics: [],
    requests: 0,
  };
  try {
    // Nothing answers, or the key is refused: every further call would fail the same way.
    if (obs.models.failure !== null || obs.models.status === 401 || obs.models.status === 403) return obs;
    obs.model = input.model ?? modelIds(obs.models.body)[0] ?? null;
    if (obs.model === null) return obs;
    const model = obs.model;
    for (const d of probedApis()) {
      const api = d.name;
      // The API's path for this model (an API may name the model in its path).
      const url = `${input.baseUrl}${pathFor(d.path, model)}`;
      // Each API's own key header (the Messages API's x-api-key and anthropic-version) beside the bearer.
      const send = (ignoreEos: boolean) =>
        call(
          url,
          {
            method: 'POST',
            body: probeBody(api, model, ignoreEos),
            timeoutMs: input.timeoutMs,
            headers: { ...headers, ...d.authHeaders(key) },
          },
          dispatcher,
        );
      const first = await send(true);
      const refused = first.status === 400 && /ignore_eos/i.test(first.body);
      obs.apis[api] = { first, withoutIgnoreEos: refused ? await send(false) : null };
    }
    // Tokenize the way a run of the API that answered would (chat counts its template).
    const answered = (t: ApiTry | null) => (t?.withoutIgnoreEos ?? t?.first)?.status === 200;
    const api = (Object.keys(obs.apis).find((a) => answered(obs.apis[a] ?? null)) ?? 'chat') as ApiKind;
    const target = {
      base_url: input.baseUrl,
      api,
      model,
      timeout_s: input.timeoutMs / 1000,
      headers: input.headers,
      ...(input.apiKeyEnv && { api_key_env: input.apiKeyEnv }),
    } as const;
    // The calibration's own detection (vLLM/SGLang first, then llama.cpp), then one count of the probe prompt.
    const counter = await serverCounter(target, PROBE_PROMPT);
    const probeTokens = counter.count === null ? null : await counter.count(PROBE_PROMPT).catch(() => null);
    obs.tokenize = { found: counter.count !== null, note: counter.note, probeTokens };
    for (const url of [`${root}/metrics`, ...input.metricsUrls]) obs.metrics.push(await get(url));
    return obs;
  } finally {
    obs.requests = dispatcher.requests;
    await dispatcher.close();
  }
}

/** The body of a probe request: what the agent sends (its API's adapter builds it), only shorter. */
export function probeBody(api: ApiName, model: string, ignoreEos: boolean): Record<string, unknown> {
  const adapter = apiModule(api).adapter({ batchSize: 1 });
  return JSON.parse(
    adapter.bodyFromMessages({ model, maxTokens: PROBE_MAX_TOKENS, ignoreEos }, [{ role: 'user', content: PROBE_PROMPT }]),
  ) as Record<string, unknown>;
}
