// Exact per-class evidence for the validity gates, over every record of the run: did each
// request have the planned shape (prompt tokens near the target, exactly the requested output),
// did any 200 end without a clean stream, and when did each agent send its first request of the
// class (the per-class start spread). Pure; the collector feeds it.
import type { OutputTokenSource, RequestRecord } from '../shared/metrics.js';
import type { ApiKind, Plan, TrafficClass } from '../shared/plan.js';
import { ClassRequests, variesPerRequest } from '../shared/request-shape.js';
import { RequestText, sessionTurnTokens } from '../shared/request-text.js';
import type { ClassSchedule } from '../shared/schedule.js';
import { sessionOfRequest } from '../shared/session-shape.js';

/**
 * The prompt tokens request `index` of a class is planned to count on the target and the output it
 * asks for; `exact` unless its prompt holds replies the server re-tokenizes (a session's later turns);
 * `asked`, the prompt tokens it asked for: below the template floor (the tokens of the template,
 * opener and head alone) a request is built to the floor, so it counts more than it asked.
 */
export type ExpectedShape = (requestIndex: number) => { inputTokens: number; outputTokens: number; exact?: boolean; asked?: number };

/** Per-request plans: the class's fixed lengths (as counted), or each request's own from the schedule (or drawn for it, closed loop). */
export function expectedShape(plan: Plan, cls: TrafficClass, schedule: ClassSchedule): ExpectedShape {
  const sessions = schedule.sessions;
  const text = new RequestText(plan, cls, '');
  if (sessions) {
    // Turn k's prompt is the template, every user message so far and every earlier reply (each
    // its asked length with ignore_eos; the server's count of the reply's text may differ).
    const count = schedule.arrivalsNs.length;
    return (i) => {
      const { session, turn } = sessionOfRequest(i, count);
      const users = (sessions.userTokens[session] ?? []).map((u, k) => text.userMessageTokens(k + 1, u));
      const inputTokens = sessionTurnTokens(text.vocab, users, sessions.outputTokens[session] ?? [], turn);
      // A first turn asked for the template and its user message; a later turn is not judged exact.
      const asked = turn === 1 ? text.vocab.request_tokens + (sessions.userTokens[session]?.[0] ?? Number.NaN) : inputTokens;
      return { inputTokens, outputTokens: sessions.outputTokens[session]?.[turn - 1] ?? Number.NaN, exact: turn === 1, asked };
    };
  }
  if (!variesPerRequest(cls)) {
    const counted = plan.prompt_calibration?.[cls.name]?.counted_prompt_tokens;
    const asked = cls.prompt.input_tokens as number;
    const fixed = { inputTokens: counted ?? asked, outputTokens: cls.prompt.output_tokens as number, asked };
    return () => fixed;
  }
  const r = schedule.requests;
  const shapes = new ClassRequests(plan, cls);
  return (i) => {
    const shape = r
      ? {
          inputTokens: r.inputTokens[i] ?? Number.NaN,
          outputTokens: r.outputTokens[i] ?? Number.NaN,
          ...(r.records.length > 0 && { record: r.records[i]! }),
        }
      : shapes.at(i);
    const planned = text.planned(shape);
    // A dataset record is sent as written: it asks for what it counts.
    return { inputTokens: planned, outputTokens: shape.outputTokens, asked: shape.record === undefined ? shape.inputTokens : planned };
  };
}

/** How a class's requests were built against the prompt tokens each asked for. */
export interface RowExactness {
  rows: number;
  /** Built to count exactly the tokens asked for (as planned on the target). */
  exact: number;
  /** Asked below the template floor, so built to the floor; and the first such request indices. */
  floor: number;
  floorFirst: number[];
  /** Built to fewer tokens than asked (a class of identical requests whose filler search ended short). */
  short: number;
  /** A session's later turns: they hold replies the server re-tokenizes, so no client plans them exactly. */
  laterTurns: number;
}

/** Request indices listed per reason at most. */
const FIRST_ROWS = 10;

/** A prompt within this share of its target length has the planned shape (domain.md §5). */
export const PROMPT_TOLERANCE = 0.1;

/** Shape and start evidence of one class. */
export class ClassShape {
  /** Successful requests (their usage is known). */
  ok = 0;
  promptTokensMin: number | null = null;
  promptTokensMax: number | null = null;
  /** Successful requests whose reported prompt_tokens is more than PROMPT_TOLERANCE off the target. */
  promptOutside = 0;
  /** Successful requests without a reported prompt_tokens (the server sent no usage). */
  promptUnreported = 0;
  /** Successful requests with usage whose prompt_tokens is not exactly their planned tokens, and the largest difference. */
  promptDiffer = 0;
  promptMaxDifference = 0;
  /** Of those, requests planned exactly (the rest hold re-tokenized replies: a session's later turns). */
  promptDifferExact = 0;
  /** Successful requests with usage planned exactly. */
  promptExactPlanned = 0;
  /** Requests not planned exactly (a session's later turns) outside PROMPT_TOLERANCE. */
  promptOutsideInexact = 0;
  /** Successful requests whose usage completion_tokens differs from the requested output_tokens. */
  completionMismatch = 0;
  /** Successful requests by where their completion_tokens came from. */
  readonly outputSources: Record<OutputTokenSource, number> = { usage: 0, tokenizer: 0, chunks: 0 };
  /** Every request of the class (every status), and how each was built (prompt-exactness.ts). */
  readonly rows: RowExactness = { rows: 0, exact: 0, floor: 0, floorFirst: [], short: 0, laterTurns: 0 };
  /** Responses with HTTP 200 that did not end as a clean stream (cut, no usage, malformed, timed out). */
  http200NotOk = 0;
  /** Responses whose canary was checked (clean streams of a prompt.canary class), and how many passed. */
  canarySamples = 0;
  canaryPassed = 0;
  /** Per agent: lateness of its first request of the class (sent − intended, or − phase start in a closed loop), ns. */
  readonly firstByAgent = new Map<number, { sentNs: number; lagNs: number }>();
  private readonly firstPhaseNs: number;
  private readonly images: boolean;

  constructor(
    cls: TrafficClass,
    private readonly expected: ExpectedShape = () => ({
      inputTokens: cls.prompt.input_tokens as number,
      outputTokens: cls.prompt.output_tokens as number,
    }),
    api?: ApiKind,
  ) {
    this.firstPhaseNs = Math.min(...cls.load.phases.map((p) => p.start_s)) * 1e9;
    // A rerank request's usage counts each (query, document) pair in the server's own pair
    // template, which the calibration (of the documents) does not: held like an image request.
    this.images = cls.prompt.images !== undefined || api === 'rerank';
  }

  /** Adds one record of this class from agent `agent`. */
  add(agent: number, r: RequestRecord): void {
    const first = this.firstByAgent.get(agent);
    if (first === undefined || r.sent_ns < first.sentNs)
      this.firstByAgent.set(agent, { sentNs: r.sent_ns, lagNs: r.sent_ns - (r.intended_ns ?? this.firstPhaseNs) });
    if (r.canary) {
      this.canarySamples++;
      if (r.canary.passed) this.canaryPassed++;
    }
    this.countRow(r.request_index);
    // A failed canary is a clean stream with the wrong words: stream integrity is not what failed.
    if (r.http_status === 200 && r.status !== 'ok' && r.status !== 'canary_failed') this.http200NotOk++;
    if (r.status !== 'ok') return;
    this.ok++;
    const { inputTokens: target, outputTokens, exact = true } = this.expected(r.request_index);
    // An embeddings request carries several inputs of input_tokens each: its prompt is held per input.
    const prompt = r.prompt_tokens === null ? null : r.prompt_tokens / (r.inputs ?? 1);
    if (prompt !== null) {
      this.promptTokensMin = Math.min(this.promptTokensMin ?? prompt, prompt);
      this.promptTokensMax = Math.max(this.promptTokensMax ?? prompt, prompt);
      // The server counts image tokens its own way: an image request is never held to an exact count.
      if (!this.images) {
        if (exact) this.promptExactPlanned++;
        const d = Math.abs(prompt - target);
        if (d !== 0) {
          this.promptDiffer++;
          if (exact) this.promptDifferExact++;
          this.promptMaxDifference = Math.max(this.promptMaxDifference, d);
        }
      }
    }
    // An image request's prompt is held only by its calibrated text.
    if (prompt === null || this.images) this.promptUnreported++;
    else if (Math.abs(prompt - target) > PROMPT_TOLERANCE * target) {
      this.promptOutside++;
      if (!exact) this.promptOutsideInexact++;
    }
    if (r.output_token_source !== null) this.outputSources[r.output_token_source]++;
    // Only the server's own count can prove the output length: a text re-count or a chunk count cannot.
    if (r.output_token_source === 'usage' && r.completion_tokens !== outputTokens) this.completionMismatch++;
  }

  // Whether the request was built to count exactly the prompt tokens it asked for, and if not why.
  private countRow(index: number): void {
    const e = this.expected(index);
    this.rows.rows++;
    if (e.exact === false) this.rows.laterTurns++;
    else if (e.asked !== undefined && e.inputTokens > e.asked) {
      this.rows.floor++;
      if (this.rows.floorFirst.length < FIRST_ROWS) this.rows.floorFirst.push(index);
    } else if (e.asked !== undefined && e.inputTokens < e.asked) this.rows.short++;
    else this.rows.exact++;
  }

  /** The prompt tokens request `index` is planned to count. */
  planned(index: number): number {
    return this.expected(index).inputTokens;
  }

  /** Max − min over agents of their first-request lateness, ms (null before any request). */
  startSpreadMs(): number | null {
    const lags = [...this.firstByAgent.values()].map((f) => f.lagNs);
    return lags.length === 0 ? null : (Math.max(...lags) - Math.min(...lags)) / 1e6;
  }
}
