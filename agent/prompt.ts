// Prompts of a calibrated length: the coordinator sized each class's filler against the target's
// tokenizer before the run (plan.prompt_calibration); without a calibration a word stands for a
// token, which is exact only on engine-sim. The text comes from shared/prompt-text.ts, the same
// module the calibration counted with. A unique head per request defeats prefix caching unless
// `shared` is declared.
import type { TrafficClass } from '../shared/plan.js';
import { canaryMarker, promptFill, promptHead, requestId, uncalibratedWords } from '../shared/prompt-text.js';
import type { ApiAdapter } from './api/adapter.js';

/** Builds request bodies for one class: the template is made once, each request adds its head. */
export class PromptBuilder {
  private readonly parts: string[];
  private readonly canary: boolean;

  constructor(
    private readonly runId: string,
    private readonly cls: TrafficClass,
    adapter: ApiAdapter,
    model: string,
    private readonly seed: number,
    calibration?: { prefix_words: number; words: number; pad_words?: number },
  ) {
    // Only classes of identical requests come here (fixed lengths); the rest use workload-prompt.ts.
    const n = cls.prompt.input_tokens as number;
    const shared = cls.prompt.shared_prefix_tokens ?? 0;
    const fallback = uncalibratedWords(n, cls.prompt.cache === 'shared' ? shared : 0);
    const fill = promptFill(
      seed,
      cls.name,
      calibration?.prefix_words ?? fallback.prefixWords,
      calibration?.words ?? fallback.words,
      calibration?.pad_words ?? 0,
    );
    this.canary = cls.prompt.canary === true;
    this.parts = adapter.bodyTemplate({
      model,
      prefix: fill.prefix,
      suffix: fill.suffix,
      maxTokens: cls.prompt.output_tokens as number,
      ignoreEos: cls.prompt.ignore_eos ?? true,
      canary: this.canary,
    });
  }

  /** The request's id (x-request-id): long and readable, it costs no prompt tokens in a header. */
  requestId(requestIndex: number): string {
    return requestId(this.runId, this.cls.name, requestIndex);
  }

  /** The unique head word of a request inside its prompt (short: it costs prompt tokens); its canary marker with `canary`. */
  head(requestIndex: number): string {
    return this.canary
      ? canaryMarker(this.runId, this.cls.name, this.seed, requestIndex)
      : promptHead(this.runId, this.cls.name, requestIndex);
  }

  /** The canary marker a response must begin with, or null when the class has none. */
  marker(requestIndex: number): string | null {
    return this.canary ? this.head(requestIndex) : null;
  }

  /** The JSON body of request `requestIndex`. */
  body(requestIndex: number): string {
    return this.parts.join(this.head(requestIndex));
  }
}
