// Prompts of a calibrated length: the coordinator sized each class's filler against the target's
// tokenizer before the run (plan.prompt_calibration); without a calibration a word stands for a
// token, which is exact only on engine-sim. The text comes from shared/prompt-text.ts, the same
// module the calibration counted with. A unique head per request defeats prefix caching unless
// `shared` is declared.
import type { TrafficClass } from '../shared/plan.js';
import { promptFill, promptHead, uncalibratedWords } from '../shared/prompt-text.js';
import type { ApiAdapter } from './api/adapter.js';

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
    calibration?: { prefix_words: number; words: number },
  ) {
    const { input_tokens: n, shared_prefix_tokens: shared = 0 } = cls.prompt;
    const fallback = uncalibratedWords(n, cls.prompt.cache === 'shared' ? shared : 0);
    const fill = promptFill(seed, cls.name, calibration?.prefix_words ?? fallback.prefixWords, calibration?.words ?? fallback.words);
    const template = adapter.bodyTemplate({
      model,
      prefix: fill.prefix,
      suffix: fill.suffix,
      maxTokens: cls.prompt.output_tokens,
      ignoreEos: cls.prompt.ignore_eos ?? true,
    });
    this.before = template.before;
    this.after = template.after;
  }

  /** The request's id (x-request-id): long and readable, it costs no prompt tokens in a header. */
  requestId(requestIndex: number): string {
    return `lf-${this.runId}-${this.cls.name}-${requestIndex}`;
  }

  /** The unique head word of a request inside its prompt (short: it costs prompt tokens). */
  head(requestIndex: number): string {
    return promptHead(this.runId, this.cls.name, requestIndex);
  }

  /** The JSON body of request `requestIndex`. */
  body(requestIndex: number): string {
    return this.before + this.head(requestIndex) + this.after;
  }
}
