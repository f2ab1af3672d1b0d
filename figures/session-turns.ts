// Figures of a multi-turn sessions class by turn index, from every record: how many requests each
// turn had, their TTFT (exact nearest rank over the records) and what a prefix cache should find.
// TTFT by turn is where cache reuse shows: turn k re-sends turn k − 1's prompt and reply.
import type { RequestRecord } from '../shared/metrics.js';
import { KV_BLOCK_TOKENS } from '../shared/prefix-implied.js';
import type { SessionShapes } from '../shared/session-shape.js';
import { turnPromptTokens } from '../shared/session-shape.js';
import type { ExactSummary } from './exact/rank-select.js';
import { exactQuantile } from './exact/rank-select.js';
import type { ExactSink } from './exact/series-values.js';
import { SeriesValues } from './exact/series-values.js';

/** One sentence per figure of run.json `sessions`. */
export const SESSION_DEFINITIONS: Record<string, string> = {
  sessions: 'sessions in the class schedule (arrivals of first turns); each ran on one agent',
  'by_turn[].requests': 'requests of that turn (turn 1 is the session start), every status',
  turns_planned: "turns the schedule drew for the sessions that started (each session's turn count)",
  turns_sent: 'turns sent (every status): the records of the class',
  turns_not_sent:
    "turns cut by the run's end: a session whose last sent turn succeeded but whose next turn would have been sent at or after duration_s (the previous reply's end plus its think time) sends no more; these turns are counted here, not as failures, and the last sessions end with their last reply before duration_s",
  turns_abandoned:
    'turns never sent because an earlier turn of their session failed (the next turn needs the reply it did not get); the failed turn itself counts as a failure',
  'by_turn[].ok': 'of them, requests with status ok',
  'by_turn[].ttft_p50_ms': 'nearest-rank median of TTFT over the ok requests of the turn, from the records',
  'by_turn[].ttft_p95_ms': 'nearest-rank p95 of TTFT over the ok requests of the turn, from the records',
  'by_turn[].prompt_tokens_mean': 'mean usage.prompt_tokens of the ok requests of the turn: the conversation so far plus the new message',
  'by_turn[].cached_prompt_share':
    'share of those prompt tokens the server reported as served from its prefix cache (usage.prompt_tokens_details.cached_tokens); null when it reported none',
  'by_turn[].implied_prefix_hit_share':
    "share of those prompt tokens a prefix cache that keeps every computed 16-token block would find: the previous turn's prompt, rounded down to 16 tokens (replies are generated, not prompt, so they are recomputed)",
  turns_with_tool_result:
    'a class with prompt.tool_loop (agentic loops): turns sent after an ok reply that called tools, which carry that reply back as the assistant\'s tool_calls and a role "tool" result per call instead of a new user message. Such a turn is counted as any later turn: its new message (the first result; further calls get empty results) is planned at the turn\'s user_tokens, and the reply it answers is re-tokenized by the server as prompt (its tool-call arguments, which engine-sim counts as words)',
};

interface Turn {
  requests: number;
  ok: number;
  /** The exact sink's series of the ok requests' TTFTs (ns). */
  ttftSeries: number;
  promptTokens: number;
  impliedHits: number;
  /** Sum of reported cached_tokens, null until a request reports one. */
  cachedTokens: number | null;
}

/** The turn figures of one sessions class. */
export class SessionTurns {
  private readonly turns = new Map<number, Turn>();
  /**
   * Per session of the schedule: its highest turn seen × 2, plus 1 when that turn succeeded; 0
   * before it started (typed, by session id, so the class costs no object per session).
   */
  private readonly last: Int32Array;
  private exact: readonly (ExactSummary | null)[] | null = null;

  /** prompt.tool_loop: the (session, turn) keys of ok replies that called tools, and of every sent turn. */
  private readonly toolLoop: { called: Set<string>; sent: Set<string> } | null;

  constructor(
    private readonly shapes: SessionShapes,
    /** Where the TTFT values go: the run's bounded exact store, or (alone) memory. */
    private readonly sink: ExactSink = new SeriesValues(),
    toolLoop = false,
  ) {
    this.last = new Int32Array(shapes.turns.length);
    this.toolLoop = toolLoop ? { called: new Set(), sent: new Set() } : null;
  }

  /** The run's exact summaries, once its store has computed them (before `summary`). */
  setExact(summaries: readonly (ExactSummary | null)[]): void {
    this.exact = summaries;
  }

  /** Adds one record of the class. */
  add(r: RequestRecord): void {
    if (r.turn === undefined || r.session_id === undefined) return;
    let t = this.turns.get(r.turn);
    if (!t) {
      t = { requests: 0, ok: 0, ttftSeries: this.sink.newSeries(), promptTokens: 0, impliedHits: 0, cachedTokens: null };
      this.turns.set(r.turn, t);
    }
    t.requests++;
    // A session id outside the schedule (another plan's agent) has no planned turns to count against;
    // offered_schedule_matches already says the schedules differ.
    const known = Number.isInteger(r.session_id) && r.session_id >= 0 && r.session_id < this.last.length;
    if (known && r.turn > this.last[r.session_id]! >> 1) this.last[r.session_id] = r.turn * 2 + (r.status === 'ok' ? 1 : 0);
    this.toolLoop?.sent.add(`${r.session_id}:${r.turn}`);
    if (r.status === 'ok' && r.tool_calls) this.toolLoop?.called.add(`${r.session_id}:${r.turn}`);
    if (r.status !== 'ok') return;
    t.ok++;
    if (r.first_content_ns !== null) this.sink.add(t.ttftSeries, r.first_content_ns - r.sent_ns);
    t.promptTokens += r.prompt_tokens ?? 0;
    t.impliedHits += this.impliedHits(r.session_id, r.turn);
    if (r.cached_tokens !== null) t.cachedTokens = (t.cachedTokens ?? 0) + r.cached_tokens;
  }

  /** Prefix-cache hit tokens the ok turns imply, over all turns. */
  impliedHitTokens(): number {
    return [...this.turns.values()].reduce((s, t) => s + t.impliedHits, 0);
  }

  /** run.json's `sessions.<class>` block. */
  summary(): Record<string, unknown> {
    const exact = this.exact ?? (this.sink instanceof SeriesValues ? this.sink.summaries() : null);
    if (!exact) throw new Error('session turn figures read before the exact store computed them');
    const byTurn = [...this.turns.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([turn, t]) => {
        const ttft = exact[t.ttftSeries] ?? null;
        const ms = (q: number): number | null => (ttft ? Math.round(exactQuantile(ttft, q) / 1e3) / 1e3 : null);
        return {
          turn,
          requests: t.requests,
          ok: t.ok,
          ttft_p50_ms: ms(0.5),
          ttft_p95_ms: ms(0.95),
          prompt_tokens_mean: t.ok > 0 ? Math.round((t.promptTokens / t.ok) * 10) / 10 : null,
          cached_prompt_share: t.cachedTokens !== null && t.promptTokens > 0 ? share(t.cachedTokens, t.promptTokens) : null,
          implied_prefix_hit_share: t.promptTokens > 0 ? share(t.impliedHits, t.promptTokens) : null,
        };
      });
    return { sessions: this.shapes.turns.length, ...this.turnCounts(), ...this.toolResults(), by_turn: byTurn };
  }

  // Records arrive in any order, so the pairs are matched at the end.
  private toolResults(): { turns_with_tool_result?: number } {
    if (!this.toolLoop) return {};
    const { called, sent } = this.toolLoop;
    let n = 0;
    for (const key of called) {
      const [session, turn] = key.split(':').map(Number);
      if (sent.has(`${session}:${turn! + 1}`)) n++;
    }
    return { turns_with_tool_result: n };
  }

  /** Planned, sent, cut and abandoned turns of the sessions that started. */
  turnCounts(): { turns_planned: number; turns_sent: number; turns_not_sent: number; turns_abandoned: number } {
    let planned = 0;
    let notSent = 0;
    let abandoned = 0;
    for (const [session, last] of this.last.entries()) {
      if (last === 0) continue;
      const turn = last >> 1;
      const n = this.shapes.turns[session] ?? turn;
      planned += n;
      if (last & 1) notSent += n - turn;
      else abandoned += n - turn;
    }
    const sent = [...this.turns.values()].reduce((s, t) => s + t.requests, 0);
    return { turns_planned: planned, turns_sent: sent, turns_not_sent: notSent, turns_abandoned: abandoned };
  }

  // Turn k re-sends turn k − 1's whole prompt first; every full 16-token block of it was computed.
  private impliedHits(session: number, turn: number): number {
    if (turn < 2) return 0;
    const prev = turnPromptTokens(this.shapes, session, turn - 1);
    const now = turnPromptTokens(this.shapes, session, turn);
    const block = (n: number): number => Math.floor(n / KV_BLOCK_TOKENS) * KV_BLOCK_TOKENS;
    return Math.min(block(prev), block(now - 1));
  }
}

function share(part: number, whole: number): number {
  return Math.round((part / whole) * 1e4) / 1e4;
}
