// What each request of a class asks for: its prompt length, output length and content choice (a
// dataset record, a trace row's hash ids). Everything is a function of (seed, class, request index)
// or of the trace row, so the coordinator and every agent agree on each request for any N.

import { classApi } from './api-kinds.js';
import { recordWords } from './dataset-parse.js';
import { isFixedLength, lengthAt } from './lengths.js';
import type { Plan, TrafficClass } from './plan.js';
import type { PromptVocabulary } from './prompt-vocabulary.js';
import { uncountedVocabulary } from './prompt-vocabulary.js';
import { rngFromKey } from './rng.js';

/** One request's shape. */
export interface RequestShape {
  /** Prompt tokens the request asks for (a dataset record: its tokens as counted, see recordTokens). */
  inputTokens: number;
  outputTokens: number;
  /** Index of the dataset record drawn (into plan.inputs.datasets[class]). */
  record?: number;
  /** Trace rows: the row's Mooncake hash ids (empty for formats without them). */
  hashIds?: readonly number[];
}

/** The vocabulary a class's per-request text is built from: its API's own, else the plan's (none when uncalibrated). */
export function classVocabulary(plan: Plan, cls: TrafficClass): PromptVocabulary | undefined {
  return plan.prompt_vocabularies?.[classApi(cls, plan.target)] ?? plan.prompt_vocabulary;
}

/**
 * Prompt tokens of a dataset record as sent (request-text.ts): as the target counted it before the
 * run, else one token per word with the head's and the template's tokens (engine-sim's rule).
 */
export function recordTokens(plan: Plan, cls: TrafficClass, record: number): number {
  const counted = plan.prompt_calibration?.[cls.name]?.record_tokens?.[record];
  if (counted !== undefined) return counted;
  const v = classVocabulary(plan, cls) ?? uncountedVocabulary('');
  const head = (cls.prompt.cache ?? 'unique') === 'unique' ? v.opener_tokens + v.head_words : 0;
  return recordWords(plan.inputs!.datasets[cls.name]![record]!) + head + v.request_tokens;
}

/** True when requests of the class differ from each other (so the schedule carries per-request shapes); sessions have their own (session-shape.ts). */
export function variesPerRequest(cls: TrafficClass): boolean {
  if (cls.load.model === 'sessions') return false;
  return (
    cls.load.model === 'trace' ||
    cls.prompt.dataset !== undefined ||
    !isFixedLength(cls.prompt.input_tokens) ||
    // An API that generates nothing (embeddings) has no output_tokens.
    (cls.prompt.output_tokens !== undefined && !isFixedLength(cls.prompt.output_tokens))
  );
}

/** The shapes of one class's requests. */
export class ClassRequests {
  private order: Uint32Array | undefined;

  constructor(
    private readonly plan: Plan,
    private readonly cls: TrafficClass,
  ) {}

  /** Request `index`'s shape; a trace row's index is its position in the replayed slice. */
  at(index: number): RequestShape {
    const { plan, cls } = this;
    const rows = plan.inputs?.traces[cls.name];
    if (cls.load.model === 'trace') {
      const row = rows?.[index];
      if (!row) throw new Error(`trace class ${cls.name} has no row ${index} (were plan.inputs attached?)`);
      return { inputTokens: row.input_tokens, outputTokens: row.output_tokens, hashIds: row.hash_ids };
    }
    const output = (fallback?: number): number =>
      fallback ?? lengthAt(cls.prompt.output_tokens!, plan.seed, cls.name, 'output_tokens', index);
    if (cls.prompt.dataset) {
      const records = plan.inputs?.datasets[cls.name];
      if (!records || records.length === 0) throw new Error(`dataset class ${cls.name} has no records (were plan.inputs attached?)`);
      const record = this.recordIndex(index, records.length);
      return { inputTokens: recordTokens(plan, cls, record), outputTokens: output(records[record]!.output_tokens), record };
    }
    return { inputTokens: lengthAt(cls.prompt.input_tokens!, plan.seed, cls.name, 'input_tokens', index), outputTokens: output() };
  }

  // With replacement: an independent uniform draw per request. Without: one seeded permutation,
  // walked in request order (each record once per pass over the file).
  private recordIndex(index: number, n: number): number {
    const key = `${this.plan.seed}:${this.cls.name}`;
    if (this.cls.prompt.dataset!.replacement ?? true) return Math.floor(rngFromKey(`${key}:record:${index}`).next() * n);
    if (!this.order) {
      const rng = rngFromKey(`${key}:dataset-order`);
      this.order = Uint32Array.from({ length: n }, (_, i) => i);
      for (let i = n - 1; i > 0; i--) {
        const j = Math.floor(rng.next() * (i + 1));
        [this.order[i], this.order[j]] = [this.order[j]!, this.order[i]!];
      }
    }
    return this.order[index % n]!;
  }
}
