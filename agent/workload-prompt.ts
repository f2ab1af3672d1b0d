// Request bodies for classes whose requests differ (length distributions, datasets, traces): each
// body is built for its request from the shape the global schedule gives it. Synthetic text is
// words (one engine-sim token each) from the class's seeded word stream, so a prompt of N words
// is N tokens there; a trace row's prompt is its hash ids' blocks (trace-blocks.ts), so rows
// sharing leading hash ids share that prefix token for token.
import type { ApiKind, Plan, TrafficClass } from '../shared/plan.js';
import { TRACE_DEFAULTS } from '../shared/plan.js';
import type { RequestShape } from '../shared/request-shape.js';
import { ClassRequests } from '../shared/request-shape.js';
import type { ClassSchedule } from '../shared/schedule.js';
import { commonFields } from './api/adapter.js';
import { TraceBlocks } from './trace-blocks.js';
import { WordPool } from './words.js';

/** Builds the body of each request of one class from its own shape. */
export class WorkloadPromptBuilder {
  private readonly shapes: ClassRequests;
  private readonly pool: WordPool;
  private readonly blocks: TraceBlocks | undefined;
  private readonly sharedWords: number;

  constructor(
    private readonly runId: string,
    private readonly plan: Plan,
    private readonly cls: TrafficClass,
    private readonly schedule: ClassSchedule,
    private readonly api: ApiKind,
    private readonly model: string,
  ) {
    this.shapes = new ClassRequests(plan, cls);
    this.pool = new WordPool(plan.seed, cls.name);
    const trace = cls.load.trace;
    this.blocks = trace ? new TraceBlocks(plan.seed, trace.block_tokens ?? TRACE_DEFAULTS.block_tokens) : undefined;
    this.sharedWords = cls.prompt.cache === 'shared' ? (cls.prompt.shared_prefix_tokens ?? 0) : 0;
  }

  /** The unique head word of a request (also its x-request-id), as PromptBuilder's. */
  head(requestIndex: number): string {
    return `lf-${this.runId}-${this.cls.name}-${requestIndex}`;
  }

  /** Request `requestIndex`'s shape: from the schedule (open loop) or drawn for it (closed loop). */
  shape(requestIndex: number): RequestShape {
    const r = this.schedule.requests;
    if (!r) return this.shapes.at(requestIndex);
    return {
      inputTokens: r.inputTokens[requestIndex]!,
      outputTokens: r.outputTokens[requestIndex]!,
      ...(r.records.length > 0 && { record: r.records[requestIndex]! }),
      ...(r.hashIds.length > 0 && { hashIds: r.hashIds[requestIndex]! }),
    };
  }

  /** The JSON body of request `requestIndex`. */
  body(requestIndex: number): string {
    const shape = this.shape(requestIndex);
    const fields = {
      model: this.model,
      prefix: '',
      suffix: '',
      maxTokens: shape.outputTokens,
      ignoreEos: this.cls.prompt.ignore_eos ?? true,
      canary: false, // canaries are for calibrated classes of identical requests
    };
    const common = commonFields(fields);
    if (shape.record !== undefined) return this.datasetBody(requestIndex, shape.record, common);
    const text = this.text(requestIndex, shape);
    return JSON.stringify(this.api === 'chat' ? { ...common, messages: [{ role: 'user', content: text }] } : { ...common, prompt: text });
  }

  // Trace rows: their blocks, then (if the hash ids cover less than the row) a unique tail.
  // Synthetic: [shared prefix] head [words], exactly inputTokens words.
  private text(requestIndex: number, shape: RequestShape): string {
    const n = shape.inputTokens;
    if (this.blocks) {
      const { text, words } = this.blocks.prompt(shape.hashIds ?? [], n);
      if (words >= n) return text;
      const tail = [this.head(requestIndex), ...this.words(0, n - words - 1)].join(' ');
      return text === '' ? tail : `${text} ${tail}`;
    }
    const shared = Math.min(this.sharedWords, n - 1);
    return [...this.words(0, shared), this.head(requestIndex), ...this.words(shared, n - 1 - shared)].join(' ');
  }

  private words(from: number, count: number): string[] {
    return this.pool.words(from, count);
  }

  // A unique head word starts the prompt (the first message, whatever its role: a repeated system
  // prompt would otherwise hit the cache) unless the class declares its prompts shared.
  private datasetBody(requestIndex: number, record: number, common: Record<string, unknown>): string {
    const r = this.plan.inputs!.datasets[this.cls.name]![record]!;
    const head = (this.cls.prompt.cache ?? 'unique') === 'unique' ? `${this.head(requestIndex)} ` : '';
    const messages = r.messages ?? [{ role: 'user', content: r.prompt! }];
    const sent = messages.map((m, i) => (i === 0 ? { role: m.role, content: head + m.content } : m));
    if (this.api === 'chat') return JSON.stringify({ ...common, messages: sent });
    return JSON.stringify({ ...common, prompt: sent.map((m) => m.content).join('\n') });
  }
}
