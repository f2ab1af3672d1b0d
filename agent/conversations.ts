// Multi-turn sessions (load.model "sessions"): each session this agent owns starts at its
// scheduled arrival and then runs on this agent alone. Turn k's request is the whole conversation
// so far — every earlier user message and the reply the server really sent — plus a new user
// message, sent the think time after the previous reply ended. Only the first turn has an
// intended time (it is the open-loop arrival); later turns depend on their replies. A session
// respects the run's time: a turn that would be sent at or after duration_s is not sent (the
// coordinator counts it as cut, turns_not_sent, never as a failure).
import type { ChatMessage, Plan, TrafficClass } from '../shared/plan.js';
import { requestId } from '../shared/prompt-text.js';
import { RequestText } from '../shared/request-text.js';
import type { ClassSchedule } from '../shared/schedule.js';
import { turnRequestIndex } from '../shared/session-shape.js';
import type { ClassStripe } from '../shared/shares.js';
import type { ApiAdapter } from './api/adapter.js';
import type { RequestResult } from './client.js';
import { runOpenLoop } from './load/open-loop.js';
import { sleepUntil } from './timing.js';

/** Sends one turn: its request index, intended time (first turns only) and body; resolves with the reply. */
export type SendTurn = (
  requestIndex: number,
  intendedNs: number | null,
  body: string,
  session: { session_id: number; turn: number },
) => Promise<RequestResult>;

/** The sessions of one class on this agent. */
export class Conversations {
  private readonly text: RequestText;

  constructor(
    private readonly runId: string,
    plan: Plan,
    private readonly cls: TrafficClass,
    private readonly schedule: ClassSchedule,
    private readonly adapter: ApiAdapter,
    private readonly model: string,
    /** The plan's end (duration_s) in ns from the run start: no turn is sent at or after it. */
    private readonly endNs = Number.POSITIVE_INFINITY,
  ) {
    this.text = new RequestText(plan, cls, runId);
  }

  /** The x-request-id of a request (a session's first message starts with its turn-1 head, so sessions never share a prefix). */
  requestId(requestIndex: number): string {
    return requestId(this.runId, this.cls.name, requestIndex);
  }

  /** Session turns are sent only through run(), with the body their history makes. */
  noBody(): never {
    throw new Error(`class ${this.cls.name} runs sessions: each turn's body comes from its conversation`);
  }

  /** Runs every session of `stripe` (its request indices are session indices); resolves when all have ended. */
  async run(stripe: ClassStripe, send: SendTurn, nowNs: () => number, signal: AbortSignal): Promise<void> {
    const sessions: Promise<void>[] = [];
    // A session starts at its instant: nothing is built ahead (its first turn's body is its own).
    await runOpenLoop(stripe, nowNs, (s, intended) => () => void sessions.push(this.converse(s, intended, send, nowNs, signal)), signal);
    await Promise.all(sessions);
  }

  private async converse(s: number, firstIntendedNs: number, send: SendTurn, nowNs: () => number, signal: AbortSignal): Promise<void> {
    const shapes = this.schedule.sessions!;
    const count = this.schedule.arrivalsNs.length;
    const messages: ChatMessage[] = [];
    let intended: number | null = firstIntendedNs;
    let calls: RequestResult['toolCalls'];
    for (let turn = 1; turn <= shapes.turns[s]! && !signal.aborted; turn++) {
      const index = turnRequestIndex(s, turn, count);
      const text = this.text.userMessage(index, turn, shapes.userTokens[s]![turn - 1]!);
      messages.push(...(calls ? toolResults(calls, text) : [{ role: 'user', content: text }]));
      const result = await send(index, intended, this.body(messages, shapes.outputTokens[s]![turn - 1]!), { session_id: s, turn });
      // A failed turn ends its session: the next turn would need the reply it did not get.
      if (result.record.status !== 'ok' || result.record.done_ns === null) return;
      calls = this.cls.prompt.tool_loop === true && result.toolCalls?.length ? result.toolCalls : undefined;
      messages.push(calls ? assistantCalling(result.content ?? '', calls) : { role: 'assistant', content: result.content ?? '' });
      if (turn < shapes.turns[s]!) {
        const next = result.record.done_ns + shapes.thinkNs[s]![turn - 1]!;
        if (next >= this.endNs) return; // cut by the run's end: the remaining turns are not sent
        await sleepUntil(nowNs, next, signal);
        if (nowNs() >= this.endNs) return; // the timer fired past the end
      }
      intended = null;
    }
  }

  private body(messages: readonly ChatMessage[], outputTokens: number): string {
    return this.adapter.bodyFromMessages(
      { model: this.model, maxTokens: outputTokens, ignoreEos: this.cls.prompt.ignore_eos ?? true },
      messages,
    );
  }
}

// An agentic loop (prompt.tool_loop): a reply that called tools goes back as the assistant's
// tool_calls, followed by one role "tool" result per call. The first result is the turn's planned
// text (seeded, of that turn's user_tokens, made as a later user message is), so the turn's new
// tokens are planned exactly as a user turn's; any further calls get an empty result.
type ToolCalls = NonNullable<RequestResult['toolCalls']>;

function assistantCalling(content: string, calls: ToolCalls): ChatMessage {
  const tool_calls = calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
  return { role: 'assistant', content, tool_calls };
}

function toolResults(calls: ToolCalls, text: string): ChatMessage[] {
  return calls.map((c, i) => ({ role: 'tool', tool_call_id: c.id, content: i === 0 ? text : '' }));
}
