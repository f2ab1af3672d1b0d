// What a class may ask of its API (class.api, else target.api, else chat on the built-in
// simulator). Chat and completions take every kind of class. The newer APIs are built by their
// adapters from one calibrated prompt or a conversation; per-request bodies (length
// distributions, datasets, traces) are still built for chat and completions only
// (agent/workload-prompt.ts), so a class of those on another API is refused rather than sent wrong.
import type { ApiKind } from './plan.js';
import type { Ctx, Obj } from './validate-kit.js';
import { child, isObj, report } from './validate-kit.js';

/** APIs whose bodies the per-request builder knows. */
const PER_REQUEST_APIS: readonly ApiKind[] = ['chat', 'completions'];

/** The API a class sends to. */
export function classApi(cls: { api?: ApiKind }, target: { api: ApiKind } | undefined): ApiKind {
  return cls.api ?? target?.api ?? 'chat';
}

/** Rules between a class's API and its prompt (`ctx` is the class). */
export function apiRules(ctx: Ctx, cls: Obj, targetApi: unknown): void {
  const api = (typeof cls['api'] === 'string' ? cls['api'] : typeof targetApi === 'string' ? targetApi : 'chat') as ApiKind;
  if (PER_REQUEST_APIS.includes(api)) return;
  const where = cls['api'] !== undefined ? child(ctx, 'api') : ctx;
  const prompt = isObj(cls['prompt']) ? cls['prompt'] : {};
  const load = isObj(cls['load']) ? cls['load'] : {};
  const why = perRequestReason(prompt, load);
  if (why)
    report(
      where,
      `api "${api}" sends fixed-length prompts or sessions only (${why} needs per-request bodies, built for chat and completions)`,
    );
}

function perRequestReason(prompt: Obj, load: Obj): string | undefined {
  if (load['model'] === 'trace') return 'a trace';
  if (prompt['dataset'] !== undefined) return 'prompt.dataset';
  if (load['model'] === 'sessions') return undefined;
  if (isObj(prompt['input_tokens'])) return 'an input_tokens distribution';
  if (isObj(prompt['output_tokens'])) return 'an output_tokens distribution';
  return undefined;
}
