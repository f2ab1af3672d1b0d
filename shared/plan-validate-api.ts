// What a class may ask of its API (class.api, else target.api, else chat on the built-in
// simulator). Every API's adapter builds a body from one calibrated prompt and from a conversation
// of messages (agent/api/), so chat, completions and the Responses API take every kind of class:
// per-request bodies (length distributions, datasets, traces) are conversations built for their
// request (agent/workload-prompt.ts). Embeddings take fixed-length prompts only: a request is a
// batch of inputs that differ by their head, which a per-request body (one conversation, counted
// whole) has no place for.
import { batchedApi } from './api-kinds.js';
import type { ApiKind } from './plan.js';
import type { Ctx, Obj } from './validate-kit.js';
import { child, isObj, noDuplicates, report } from './validate-kit.js';

/** APIs whose adapters build per-request bodies (all but embeddings: see above). */
const PER_REQUEST_APIS: readonly ApiKind[] = ['chat', 'completions', 'responses'];

// The API of a class not yet known to be valid.
function apiOf(cls: Obj, targetApi: unknown): ApiKind {
  return (typeof cls['api'] === 'string' ? cls['api'] : typeof targetApi === 'string' ? targetApi : 'chat') as ApiKind;
}

/** Whether a class's API generates tokens (embeddings do not: no output_tokens). */
export function generates(cls: Obj, targetApi: unknown): boolean {
  return !batchedApi(apiOf(cls, targetApi));
}

/** Rules between a class's API and its prompt (`ctx` is the class). */
export function apiRules(ctx: Ctx, cls: Obj, targetApi: unknown): void {
  const api = apiOf(cls, targetApi);
  const prompt = isObj(cls['prompt']) ? cls['prompt'] : {};
  const load = isObj(cls['load']) ? cls['load'] : {};
  const p = child(ctx, 'prompt');
  if (cls['adapters'] !== undefined && load['model'] === 'sessions')
    report(child(ctx, 'adapters'), 'not allowed with model "sessions" (a conversation keeps one model)');
  noDuplicates(child(ctx, 'adapters'), cls['adapters'], 'model');
  if (prompt['tools'] !== undefined && api !== 'chat')
    report(child(p, 'tools'), `only allowed with api "chat" (this class sends to "${api}")`);
  if (prompt['tool_choice'] !== undefined && prompt['tools'] === undefined) report(child(p, 'tool_choice'), 'only allowed with tools');
  if (prompt['tool_loop'] === true && prompt['tools'] === undefined) report(child(p, 'tool_loop'), 'only allowed with tools');
  if (prompt['tool_loop'] === true && load['model'] !== 'sessions')
    report(child(p, 'tool_loop'), 'only allowed with model "sessions" (a tool result is the next turn of a conversation)');
  noDuplicates(child(p, 'tools'), prompt['tools'], 'name');
  if (prompt['images'] !== undefined) {
    const why = api !== 'chat' ? `api "${api}"` : load['model'] === 'sessions' ? 'model "sessions"' : undefined;
    if (why) report(child(p, 'images'), `not allowed with ${why} (images go with chat classes other than sessions)`);
  }
  if (batchedApi(api)) embeddingsRules(ctx, cls, prompt, load, api);
  else if (prompt['batch_size'] !== undefined) report(child(p, 'batch_size'), 'only allowed with api "embeddings" or "rerank"');
  if (PER_REQUEST_APIS.includes(api)) return;
  const where = cls['api'] !== undefined ? child(ctx, 'api') : ctx;
  const why = perRequestReason(prompt, load);
  if (why)
    report(
      where,
      `api "${api}" sends fixed-length prompts only (${why} needs per-request bodies: one conversation each, which an embeddings batch of inputs has no place for)`,
    );
}

// An embeddings (or rerank) request has inputs and no output, no conversation and no answer to check.
function embeddingsRules(ctx: Ctx, cls: Obj, prompt: Obj, load: Obj, api: ApiKind): void {
  const p = child(ctx, 'prompt');
  const refuse = (key: string, why: string) => prompt[key] !== undefined && report(child(p, key), why);
  refuse('output_tokens', `not allowed with api "${api}" (it generates no tokens)`);
  if (prompt['canary'] === true) report(child(p, 'canary'), `not allowed with api "${api}" (there is no answer to check)`);
  if (load['model'] === 'sessions')
    report(child(child(ctx, 'load'), 'model'), `"sessions" is not allowed with api "${api}" (no conversation)`);
  const slo = isObj(cls['slo']) ? cls['slo'] : {};
  for (const key of ['ttft_p95_ms', 'tpot_p95_ms'])
    if (slo[key] !== undefined)
      report(child(child(ctx, 'slo'), key), `not allowed with api "${api}" (it has no first token; bound e2e_p95_ms)`);
}

function perRequestReason(prompt: Obj, load: Obj): string | undefined {
  if (load['model'] === 'trace') return 'a trace';
  if (prompt['dataset'] !== undefined) return 'prompt.dataset';
  if (load['model'] === 'sessions') return undefined;
  if (isObj(prompt['input_tokens'])) return 'an input_tokens distribution';
  if (isObj(prompt['output_tokens'])) return 'an output_tokens distribution';
  return undefined;
}
