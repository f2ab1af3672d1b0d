// The text of every request whose prompt differs per request (length distributions, trace rows,
// dataset records, session turns), built from the target's token-exact vocabulary (plan as run's
// prompt_vocabulary) and the seed alone. The agents send it; the coordinator counts a sample of it
// on the target before load. A request's `planned` tokens are what the server should count for it.
//   synthetic:  opener [shared words] head filler           → input_tokens exactly
//   trace row:  opener block(h1) block(h2) … [head filler]  → input_length exactly; each block
//               block_tokens words (the first one opener_tokens fewer), the same words wherever h is
//   dataset:    opener head + the record's first message     → its counted tokens
//   session:    each new user message opener [head] filler  → user_tokens exactly
import type { ChatMessage, DatasetRecord, Plan, TrafficClass } from './plan.js';
import { TRACE_DEFAULTS } from './plan.js';
import type { PromptVocabulary } from './prompt-vocabulary.js';
import { drawFrom, headOf, uncountedVocabulary, WordStream } from './prompt-vocabulary.js';
import type { RequestShape } from './request-shape.js';
import { classVocabulary, recordTokens } from './request-shape.js';
import { rngFromKey } from './rng.js';

/** A request's messages and the prompt tokens the target should count for it. */
export interface BuiltRequest {
  messages: ChatMessage[];
  planned: number;
}

/** A conversation as one text, for APIs without roles (the completions API's prompt). */
export { completionPrompt } from './apis/contract.js';

/** The vocabulary a plan as run carries for `cls` (its API's: request-shape.ts), or the uncounted one (one word, one token). */
export function vocabularyOf(plan: Plan, cls: TrafficClass): PromptVocabulary {
  return classVocabulary(plan, cls) ?? uncountedVocabulary('no vocabulary in the plan');
}

// Blocks are regenerated after this many distinct ids: memory stays bounded on corpora with
// millions of ids, and the content never depends on what was cached.
const MAX_CACHED_BLOCKS = 4096;

/** Builds the text of each request of one class. */
export class RequestText {
  readonly vocab: PromptVocabulary;
  private readonly stream: WordStream;
  private readonly blockTokens: number;
  private readonly blocks = new Map<number, { words: string[]; text: string }>();

  constructor(
    private readonly plan: Plan,
    private readonly cls: TrafficClass,
    private readonly runId: string,
  ) {
    this.vocab = vocabularyOf(plan, cls);
    this.stream = new WordStream(this.vocab.words, `${plan.seed}:${cls.name}:prompt`);
    this.blockTokens = cls.load.trace?.block_tokens ?? TRACE_DEFAULTS.block_tokens;
  }

  /** The unique head of request `index` (opener first): a fixed number of tokens on every request. */
  head(index: number): string {
    return [this.vocab.opener, ...headOf(this.vocab, this.runId, this.cls.name, index)].join(' ');
  }

  /** Request `index` of shape `shape` (a distribution draw, a trace row or a dataset record). */
  build(index: number, shape: RequestShape): BuiltRequest {
    if (shape.record !== undefined) return this.dataset(index, shape.record);
    if (this.cls.load.model === 'trace') return this.traceRow(index, shape);
    return this.synthetic(index, shape.inputTokens);
  }

  /** The prompt tokens request `shape` should count (as build() makes it, without making the text). */
  planned(shape: RequestShape): number {
    const v = this.vocab;
    if (shape.record !== undefined) return recordTokens(this.plan, this.cls, shape.record);
    const floor = this.tokens(this.cls.load.model === 'trace' ? 0 : v.head_words);
    return Math.max(shape.inputTokens, floor);
  }

  /** Tokens of the whole request with `words` vocabulary words after the opener. */
  private tokens(words: number): number {
    return this.vocab.request_tokens + this.vocab.opener_tokens + words;
  }

  private synthetic(index: number, n: number): BuiltRequest {
    const v = this.vocab;
    const room = Math.max(0, n - this.tokens(0) - v.head_words);
    const shared =
      this.cls.prompt.cache === 'shared' ? Math.min(room, Math.max(0, (this.cls.prompt.shared_prefix_tokens ?? 0) - v.opener_tokens)) : 0;
    const text = spaced([
      v.opener,
      this.stream.text(0, shared),
      headOf(v, this.runId, this.cls.name, index).join(' '),
      this.stream.text(shared, room - shared),
    ]);
    return { messages: [{ role: 'user', content: text }], planned: this.tokens(v.head_words + room) };
  }

  // The row's blocks up to its length; past its hash ids, a head and filler (or, with no room for a
  // head, filler of its own) keep the tail unique.
  private traceRow(index: number, shape: RequestShape): BuiltRequest {
    const v = this.vocab;
    const room = Math.max(0, shape.inputTokens - this.tokens(0));
    const parts = [v.opener];
    let have = 0;
    for (const [i, id] of (shape.hashIds ?? []).entries()) {
      if (have >= room) break;
      const size = Math.min(i === 0 ? Math.max(0, this.blockTokens - v.opener_tokens) : this.blockTokens, room - have);
      const block = this.block(id);
      parts.push(size === block.words.length ? block.text : block.words.slice(0, size).join(' '));
      have += size;
    }
    const rest = room - have;
    if (rest >= v.head_words) parts.push(headOf(v, this.runId, this.cls.name, index).join(' '), this.stream.text(0, rest - v.head_words));
    else parts.push(drawFrom(v.words, rngFromKey(`${this.plan.seed}:${this.cls.name}:tail:${index}`), rest).join(' '));
    return { messages: [{ role: 'user', content: spaced(parts) }], planned: this.tokens(room) };
  }

  /** The words of hash id `id`'s block: the same on every row, agent and run of this seed. */
  private block(id: number): { words: string[]; text: string } {
    let block = this.blocks.get(id);
    if (!block) {
      const words = drawFrom(this.vocab.words, rngFromKey(`${this.plan.seed}:trace-block:${id}`), this.blockTokens);
      block = { words, text: words.join(' ') };
      if (this.blocks.size >= MAX_CACHED_BLOCKS) this.blocks.clear();
      this.blocks.set(id, block);
    }
    return block;
  }

  // A unique head starts the first message (whatever its role: a repeated system prompt would
  // otherwise hit the cache) unless the class declares its prompts shared.
  private dataset(index: number, record: number): BuiltRequest {
    const r = this.plan.inputs!.datasets[this.cls.name]![record]!;
    const unique = (this.cls.prompt.cache ?? 'unique') === 'unique';
    return { messages: datasetMessages(r, unique ? this.head(index) : null), planned: recordTokens(this.plan, this.cls, record) };
  }

  /** A session's user message of turn `turn` (request `index`): exactly `tokens` tokens of text, its head on turn 1. */
  userMessage(index: number, turn: number, tokens: number): string {
    const v = this.vocab;
    const head = turn === 1 ? headOf(v, this.runId, this.cls.name, index) : [];
    const fill = Math.max(0, tokens - v.opener_tokens - head.length);
    return spaced([v.opener, head.join(' '), this.stream.text(0, fill)]);
  }

  /** Tokens of that message: `tokens`, unless the opener (and on turn 1 the head) alone cost more. */
  userMessageTokens(turn: number, tokens: number): number {
    return Math.max(tokens, this.vocab.opener_tokens + (turn === 1 ? this.vocab.head_words : 0));
  }
}

/** Non-empty parts joined by single spaces. */
function spaced(parts: readonly string[]): string {
  return parts.filter((p) => p !== '').join(' ');
}

/** A dataset record's messages with `head` (or nothing) in front of the first one. */
export function datasetMessages(r: DatasetRecord, head: string | null): ChatMessage[] {
  const messages = r.messages ?? [{ role: 'user', content: r.prompt! }];
  return head === null ? messages : messages.map((m, i) => (i === 0 ? { role: m.role, content: `${head} ${m.content}` } : m));
}

/**
 * Prompt tokens turn `turn` of a session should count: the template around the first message, every
 * user message so far, every earlier reply as long as it was asked to be (the server's re-count of a
 * reply's text may differ: those turns are compared within a tolerance), and the template per turn.
 */
export function sessionTurnTokens(
  v: PromptVocabulary,
  userTokens: readonly number[],
  outputTokens: readonly number[],
  turn: number,
): number {
  let n = v.request_tokens + (turn - 1) * v.turn_tokens;
  for (let k = 0; k < turn; k++) n += userTokens[k]! + (k < turn - 1 ? outputTokens[k]! : 0);
  return n;
}
