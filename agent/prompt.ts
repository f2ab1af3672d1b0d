// Prompts of an exact length: a word is a token for engine-sim's tokenizer, so a prompt of N
// words has exactly N prompt tokens there (against a real server, usage.prompt_tokens is the truth
// and is recorded). A unique head per request defeats prefix caching unless `shared` is declared.
import type { TrafficClass } from '../shared/plan.js';
import { rngFromKey } from '../shared/rng.js';
import type { ApiAdapter } from './api/adapter.js';

// Common short English words: real tokenizers map most of them to one token each.
export const VOCABULARY = (
  'the of and to in is was for on are with as be at by this had not but from or have an they which one you were all ' +
  'we her she there been if more when will would who so no time can out up about into than them some could its two ' +
  'may first then do any like my now over such our man me even most made after also did many before must through ' +
  'years where much your way well down should because each just those people how too little state good very make'
).split(' ');

/** Builds request bodies for one class: the template is made once, each request adds its head. */
export class PromptBuilder {
  private readonly before: string;
  private readonly after: string;

  constructor(
    private readonly runId: string,
    private readonly cls: TrafficClass,
    adapter: ApiAdapter,
    model: string,
    seed: number,
  ) {
    // Only classes of identical requests come here (fixed numbers); the rest use workload-prompt.ts.
    const { input_tokens: n, shared_prefix_tokens: shared = 0 } = cls.prompt as { input_tokens: number; shared_prefix_tokens?: number };
    const sharedWords = cls.prompt.cache === 'shared' ? Math.min(shared, n - 1) : 0;
    const rng = rngFromKey(`${seed}:${cls.name}:prompt`);
    const words = (count: number): string =>
      Array.from({ length: count }, () => VOCABULARY[Math.floor(rng.next() * VOCABULARY.length)]).join(' ');
    const prefix = sharedWords > 0 ? `${words(sharedWords)} ` : '';
    const rest = n - sharedWords - 1;
    const template = adapter.bodyTemplate({
      model,
      prefix,
      suffix: rest > 0 ? ` ${words(rest)}` : '',
      maxTokens: cls.prompt.output_tokens as number,
      ignoreEos: cls.prompt.ignore_eos ?? true,
    });
    this.before = template.before;
    this.after = template.after;
  }

  /** The unique head word of a request (no whitespace, so it stays one word). */
  head(requestIndex: number): string {
    return `lf-${this.runId}-${this.cls.name}-${requestIndex}`;
  }

  /** The JSON body of request `requestIndex`. */
  body(requestIndex: number): string {
    return this.before + this.head(requestIndex) + this.after;
  }
}
