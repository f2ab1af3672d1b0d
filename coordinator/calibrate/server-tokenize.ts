// Counting prompt tokens with the target's own tokenize endpoint, at the server root (not under
// /v1). Two dialects exist (domain.md §10): vLLM and SGLang take `prompt`, or `messages` with
// `add_generation_prompt` so the chat template is counted as a chat request would be, and answer
// `count` (or `tokens`); llama.cpp's server takes `content` and answers `tokens`, with its chat
// template applied first by `POST /apply-template`. The dialect is found by asking, once.
import { request } from 'undici';
import { chatTemplated } from '../../shared/api-kinds.js';
import type { ApiKind, ChatMessage, Target } from '../../shared/plan.js';
import { completionPrompt } from '../../shared/request-text.js';

/** One tokenize call may take this long before the method is given up. */
const CALL_TIMEOUT_MS = 15_000;

/** What one request carries: a prompt text (a chat request's one user message), or its messages. */
export type RequestContent = string | readonly ChatMessage[];

/** Counts the tokens of a whole request whose prompt is `content`. */
export type CountText = (content: RequestContent) => Promise<number>;

/** The messages of `content` (a text is one user message). */
export function messagesOf(content: RequestContent): readonly ChatMessage[] {
  return typeof content === 'string' ? [{ role: 'user', content }] : content;
}

/** The prompt a completions request sends for `content`. */
export function promptOf(content: RequestContent): string {
  return typeof content === 'string' ? content : completionPrompt(content);
}

/**
 * A working counter and how it asks, or why there is none. `count` counts a request of the
 * target's API; `countFor` one of any API (a class may send to another: class.api), each with its
 * chat template or without as that API is served (shared/api-kinds.ts chatTemplated).
 */
export type ServerCounter = { count: CountText; countFor: (api: ApiKind) => CountText; note: string } | { count: null; note: string };

/** The server root of an OpenAI base URL: `http://h:8000/v1` → `http://h:8000`. */
export function serverRoot(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}`;
}

/** Finds which tokenize dialect the target speaks (probing with `probeText`). */
export async function serverCounter(target: Target, probeText: string): Promise<ServerCounter> {
  const root = serverRoot(target.base_url);
  const headers = requestHeaders(target);
  const vllm =
    (api: ApiKind): CountText =>
    (text) =>
      post(root, '/tokenize', vllmBody(api, target.model, text), headers).then(countOf);
  const llamaCpp =
    (api: ApiKind): CountText =>
    async (text) => {
      const prompt = chatTemplated(api) ? await applyTemplate(root, messagesOf(text), headers) : promptOf(text);
      return countOf(await post(root, '/tokenize', { content: prompt, add_special: true }, headers));
    };
  const tried: string[] = [];
  for (const [name, count] of [
    ['vLLM/SGLang', vllm],
    ['llama.cpp', llamaCpp],
  ] as const) {
    try {
      if ((await count(target.api)(probeText)) > 0)
        return { count: count(target.api), countFor: count, note: `${root}/tokenize (${name} dialect, ${target.api})` };
      tried.push(`${name}: counted no tokens`);
    } catch (err) {
      tried.push(`${name}: ${(err as Error).message}`);
      // Nothing listens, or the endpoint is not there: the other dialect cannot do better.
      if (/ECONNREFUSED|ENOTFOUND|HTTP 404|timed out/.test((err as Error).message)) break;
    }
  }
  return { count: null, note: `no tokenize endpoint at ${root}/tokenize (${tried.join('; ')})` };
}

function vllmBody(api: ApiKind, model: string, content: RequestContent): Record<string, unknown> {
  if (!chatTemplated(api)) return { model, prompt: promptOf(content) };
  return { model, messages: messagesOf(content), add_generation_prompt: true };
}

async function applyTemplate(root: string, messages: readonly ChatMessage[], headers: Record<string, string>): Promise<string> {
  const body = await post(root, '/apply-template', { messages }, headers);
  const prompt = (body as { prompt?: unknown }).prompt;
  if (typeof prompt !== 'string') throw new Error('/apply-template answered without a prompt');
  return prompt;
}

// The count from either answer shape: vLLM's `count`, or the length of `tokens`.
function countOf(body: unknown): number {
  const b = body as { count?: unknown; tokens?: unknown };
  if (typeof b.count === 'number') return b.count;
  if (Array.isArray(b.tokens)) return b.tokens.length;
  throw new Error('the answer has neither count nor tokens');
}

async function post(root: string, path: string, body: unknown, headers: Record<string, string>): Promise<unknown> {
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(`${root}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
  } catch (err) {
    const e = err as Error & { code?: string };
    throw new Error(e.name === 'TimeoutError' ? `timed out after ${CALL_TIMEOUT_MS} ms` : `${e.code ?? e.name}: ${e.message}`);
  }
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode} from ${path}: ${text.slice(0, 200)}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${path} answered with text that is not JSON`);
  }
}

// The plan's headers (a gateway may route on them) and the key where this machine has it.
function requestHeaders(target: Target): Record<string, string> {
  const headers: Record<string, string> = { ...(target.headers ?? {}) };
  const key = target.api_key_env ? process.env[target.api_key_env] : undefined;
  if (key) headers.authorization = `Bearer ${key}`;
  return headers;
}
