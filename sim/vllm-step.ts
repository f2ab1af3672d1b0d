// A request as one replica tracks it, and the plan of one engine step: who runs how many tokens,
// and the step's shape (decodes, prefill tokens, prefill attention) that the profile prices.
import type { EngineJob, EngineTicket } from './job.js';
import type { KvHolder } from './kv-cache.js';
import type { StepShape } from './profile.js';

/** One request inside the replica. */
export interface Seq extends EngineTicket {
  state: EngineTicket['state'];
  readonly job: EngineJob;
  /** Arrival sequence number: FCFS order and tie-break. */
  readonly order: number;
  readonly priority: number;
  readonly arrivalS: number;
  /** Tokens whose KV is computed. */
  computed: number;
  /** Tokens emitted so far. */
  generated: number;
  readonly kv: KvHolder;
  /** Not scheduled before this time (a stall fault). */
  pausedUntilS: number;
  /** When the last token went out (arrival before the first), for the inter-token histogram. */
  lastTokenS: number;
  /** Prompt tokens whose KV a prefill replica sent, until the first admission uses them. */
  remoteKv: number;
}

/** One step: who runs how many tokens, and how long it takes. */
export interface StepPlan {
  seqs: Seq[];
  tokens: number[];
  shape: StepShape;
  durationS: number;
}

/** A plan with nobody in it yet. */
export function emptyPlan(): StepPlan {
  return { seqs: [], tokens: [], shape: { decodeSeqs: 0, prefillTokens: 0, prefillPairs: 0 }, durationS: 0 };
}

/** Tokens the request's KV must cover before it samples its next token: the prompt plus every
 * token emitted so far (after a preemption all of them are recomputed). */
export function numTokens(seq: Seq): number {
  return seq.job.promptTokens + seq.generated;
}

/** Schedules `tokens` tokens of `seq` (before its `computed` advances). */
export function addToPlan(plan: StepPlan, seq: Seq, tokens: number): void {
  plan.seqs.push(seq);
  plan.tokens.push(tokens);
  addShape(plan.shape, seq, tokens, 1);
}

/** Takes `seq` out of the plan if it is in it; returns the tokens freed. */
export function removeFromPlan(plan: StepPlan, seq: Seq): number {
  const i = plan.seqs.indexOf(seq);
  if (i < 0) return 0;
  const tokens = plan.tokens[i]!;
  addShape(plan.shape, seq, tokens, -1);
  plan.seqs.splice(i, 1);
  plan.tokens.splice(i, 1);
  return tokens;
}

// A decode feeds back the one token sampled last; anything else is (re)prefill, whose attention
// covers what is already computed plus, causally, half the chunk.
function addShape(shape: StepShape, seq: Seq, tokens: number, sign: 1 | -1): void {
  const decoding = seq.generated > 0 && tokens === 1 && seq.computed + 1 === numTokens(seq);
  if (decoding) {
    shape.decodeSeqs += sign;
    return;
  }
  shape.prefillTokens += sign * tokens;
  shape.prefillPairs += sign * tokens * (seq.computed + tokens / 2);
}
