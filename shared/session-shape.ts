// Multi-turn sessions (load.model "sessions"): what each session and each of its turns asks for.
// Session s of a class draws its turn count, every user message length, every reply length and
// every think time from streams keyed by (seed, class, s, turn), so any agent computes any
// session alone; request_index of turn k of session s is (k − 1)·S + s, S = sessions in the class.
import { lengthAt } from './lengths.js';
import type { SessionSpec, TrafficClass } from './plan.js';
import { rngFromKey } from './rng.js';

/** Every session of one class, index = session index. */
export interface SessionShapes {
  turns: number[];
  /** Per session, per turn (0-based): tokens of the new user message. */
  userTokens: number[][];
  /** Per session, per turn: tokens of the reply asked for (max_tokens). */
  outputTokens: number[][];
  /** Per session, per turn but the last: ns from that turn's reply end to the next user message. */
  thinkNs: number[][];
}

/** Draws the shapes of `count` sessions. */
export function sessionShapes(seed: number, cls: TrafficClass, count: number): SessionShapes {
  const spec = cls.load.session!;
  const out: SessionShapes = { turns: [], userTokens: [], outputTokens: [], thinkNs: [] };
  for (let s = 0; s < count; s++) {
    const turns = lengthAt(spec.turns, seed, cls.name, 'turns', s);
    out.turns.push(turns);
    out.userTokens.push(upTo(turns, (k) => lengthAt(spec.user_tokens, seed, cls.name, `user_tokens:${k + 1}`, s)));
    out.outputTokens.push(upTo(turns, (k) => lengthAt(cls.prompt.output_tokens!, seed, cls.name, `output_tokens:${k + 1}`, s)));
    out.thinkNs.push(upTo(turns - 1, (k) => thinkNs(spec.think_time_s, rngFromKey(`${seed}:${cls.name}:think:${k + 1}:${s}`).next())));
  }
  return out;
}

function upTo(n: number, f: (k: number) => number): number[] {
  return Array.from({ length: n }, (_, k) => f(k));
}

function thinkNs(spec: SessionSpec['think_time_s'], u: number): number {
  const s = typeof spec === 'number' ? spec : spec.min + u * (spec.max - spec.min);
  return Math.round(s * 1e9);
}

/** The request index of turn `turn` (from 1) of session `session`, with `sessions` sessions in the class. */
export function turnRequestIndex(session: number, turn: number, sessions: number): number {
  return (turn - 1) * sessions + session;
}

/** The session and turn (from 1) of a request index. */
export function sessionOfRequest(requestIndex: number, sessions: number): { session: number; turn: number } {
  return { session: requestIndex % sessions, turn: Math.floor(requestIndex / sessions) + 1 };
}

/**
 * Prompt tokens of turn `turn` of session `s` when every earlier reply had exactly its length:
 * all user messages so far plus all earlier replies (engine-sim counts each message's words).
 */
export function turnPromptTokens(shapes: SessionShapes, s: number, turn: number): number {
  let n = 0;
  for (let k = 0; k < turn; k++) n += shapes.userTokens[s]![k]! + (k < turn - 1 ? shapes.outputTokens[s]![k]! : 0);
  return n;
}
