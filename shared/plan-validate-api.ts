// What a class may ask of its API (class.api, else target.api, else chat on the built-in
// simulator), as the API's descriptor (shared/apis/) says: whether it takes per-request bodies
// (length distributions, datasets, traces: conversations built for their request,
// agent/workload-prompt.ts), sessions, tools and images, and whether a request is a batch of
// inputs answered in one body (embeddings, rerank), which takes fixed-length prompts only: its
// inputs differ by their head, which a per-request body (one conversation, counted whole) has no
// place for.

import type { ApiDescriptor } from './apis/contract.js';
import { API_NAMES, apiDescriptor, apisWhere } from './apis/registry.js';
import { SLO_LATENCY_BOUNDS } from './slo-bounds.js';
import type { Ctx, Obj } from './validate-kit.js';
import { child, isObj, noDuplicates, report } from './validate-kit.js';

// The API of a class not yet known to be valid (an unknown name is the schema's to report).
function apiOf(cls: Obj, targetApi: unknown): string {
  return typeof cls['api'] === 'string' ? cls['api'] : typeof targetApi === 'string' ? targetApi : 'chat';
}

function descriptorOf(cls: Obj, targetApi: unknown): ApiDescriptor | undefined {
  const api = apiOf(cls, targetApi);
  return API_NAMES.includes(api) ? apiDescriptor(api) : undefined;
}

/** Whether a class's API generates tokens (embeddings do not: no output_tokens). */
export function generates(cls: Obj, targetApi: unknown): boolean {
  return !descriptorOf(cls, targetApi)?.batched;
}

/** Rules between a class's API and its prompt (`ctx` is the class). */
export function apiRules(ctx: Ctx, cls: Obj, targetApi: unknown): void {
  const d = descriptorOf(cls, targetApi);
  if (!d) return;
  const api = d.name;
  const prompt = isObj(cls['prompt']) ? cls['prompt'] : {};
  const load = isObj(cls['load']) ? cls['load'] : {};
  const p = child(ctx, 'prompt');
  if (cls['adapters'] !== undefined && load['model'] === 'sessions')
    report(child(ctx, 'adapters'), 'not allowed with model "sessions" (a conversation keeps one model)');
  noDuplicates(child(ctx, 'adapters'), cls['adapters'], 'model');
  if (prompt['tools'] !== undefined && !d.tools)
    report(child(p, 'tools'), `only allowed with api ${apisWhere((a) => a.tools)} (this class sends to "${api}")`);
  if (prompt['tool_choice'] !== undefined && prompt['tools'] === undefined) report(child(p, 'tool_choice'), 'only allowed with tools');
  if (prompt['tool_loop'] === true && prompt['tools'] === undefined) report(child(p, 'tool_loop'), 'only allowed with tools');
  if (prompt['tool_loop'] === true && load['model'] !== 'sessions')
    report(child(p, 'tool_loop'), 'only allowed with model "sessions" (a tool result is the next turn of a conversation)');
  noDuplicates(child(p, 'tools'), prompt['tools'], 'name');
  if (prompt['images'] !== undefined) {
    const why = !d.images ? `api "${api}"` : load['model'] === 'sessions' ? 'model "sessions"' : undefined;
    if (why)
      report(
        child(p, 'images'),
        `not allowed with ${why} (images go with api ${apisWhere((a) => a.images)}, in classes other than sessions)`,
      );
  }
  if (d.batched) embeddingsRules(ctx, cls, prompt, api);
  else if (prompt['batch_size'] !== undefined) report(child(p, 'batch_size'), `only allowed with api ${apisWhere((a) => a.batched)}`);
  if (!d.sessions && load['model'] === 'sessions')
    report(child(child(ctx, 'load'), 'model'), `"sessions" is not allowed with api "${api}" (no conversation)`);
  if (d.perRequest) return;
  const where = cls['api'] !== undefined ? child(ctx, 'api') : ctx;
  const why = perRequestReason(prompt, load);
  if (why)
    report(
      where,
      `api "${api}" sends fixed-length prompts only (${why} needs per-request bodies: one conversation each, which an embeddings batch of inputs has no place for)`,
    );
}

// An embeddings (or rerank) request has inputs and no output, no conversation and no answer to check.
function embeddingsRules(ctx: Ctx, cls: Obj, prompt: Obj, api: string): void {
  const p = child(ctx, 'prompt');
  const refuse = (key: string, why: string) => prompt[key] !== undefined && report(child(p, key), why);
  refuse('output_tokens', `not allowed with api "${api}" (it generates no tokens)`);
  if (prompt['canary'] === true) report(child(p, 'canary'), `not allowed with api "${api}" (there is no answer to check)`);
  const slo = isObj(cls['slo']) ? cls['slo'] : {};
  // Only the end-to-end bounds of the SLO table apply to a request without tokens.
  const e2e = SLO_LATENCY_BOUNDS.filter((b) => b.metric === 'e2e').map((b) => b.key);
  for (const { key } of SLO_LATENCY_BOUNDS.filter((b) => b.metric !== 'e2e'))
    if (slo[key] !== undefined)
      report(child(child(ctx, 'slo'), key), `not allowed with api "${api}" (it has no first token; bound ${e2e.join(' or ')})`);
}

function perRequestReason(prompt: Obj, load: Obj): string | undefined {
  if (load['model'] === 'trace') return 'a trace';
  if (prompt['dataset'] !== undefined) return 'prompt.dataset';
  if (load['model'] === 'sessions') return undefined;
  if (isObj(prompt['input_tokens'])) return 'an input_tokens distribution';
  if (isObj(prompt['output_tokens'])) return 'an output_tokens distribution';
  return undefined;
}
