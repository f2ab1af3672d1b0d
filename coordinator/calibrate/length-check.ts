// Verified, not assumed: before any load, a seeded sample of each class's real request bodies (all
// of them when the class has few) is built exactly as the agents will build it and counted on the
// target; each count is held against the tokens planned for that request. Sessions: each sampled
// first turn, and each later user message counted as a conversation of its own (its template's
// cost is the empty request's), since later turns carry replies not yet written.
import { batchedApi, batchInputHead, classApi } from '../../shared/api-kinds.js';
import type { Plan, PromptLengthCheck, TrafficClass } from '../../shared/plan.js';
import { canaryMarker, promptFill, promptHead, promptText } from '../../shared/prompt-text.js';
import { ClassRequests, variesPerRequest } from '../../shared/request-shape.js';
import { RequestText } from '../../shared/request-text.js';
import { rngFromKey } from '../../shared/rng.js';
import type { ClassSchedule } from '../../shared/schedule.js';
import { turnRequestIndex } from '../../shared/session-shape.js';
import type { CountText, RequestContent } from './server-tokenize.js';

/** Requests counted per class at most; a class with fewer is counted whole. */
export const CHECK_SAMPLE = 48;
/**
 * Planned prompt tokens counted per class at most (at least one request is): long contexts stay
 * bounded in time and memory (a tokenizer file counts a 128k-token body in about 2 s).
 */
export const CHECK_TOKENS = 524_288;
const PARALLEL = 8;

/** One request to count: its content, the tokens planned for it and the tokens it asked for. */
interface Sample {
  content: RequestContent;
  planned: number;
  requested: number;
}

/** Counts a sample of `cls`'s bodies on the target. */
export async function checkClass(
  plan: Plan,
  runId: string,
  cls: TrafficClass,
  schedule: ClassSchedule,
  count: CountText,
): Promise<PromptLengthCheck> {
  const samples = withinBudget(samplesOf(plan, runId, cls, schedule));
  const counts = await countAll(
    samples.map((s) => s.content),
    count,
  );
  let exact = 0;
  let maxDiff = 0;
  for (const [i, s] of samples.entries()) {
    const d = Math.abs(counts[i]! - s.planned);
    if (d === 0) exact++;
    maxDiff = Math.max(maxDiff, d);
  }
  return {
    sampled: samples.length,
    exact,
    exact_share: samples.length === 0 ? 1 : Math.round((exact / samples.length) * 1e6) / 1e6,
    max_abs_difference: maxDiff,
    unreachable: samples.filter((s) => s.planned !== s.requested).length,
  };
}

// The samples in order until CHECK_TOKENS planned tokens are reached (at least one).
function withinBudget(samples: Iterable<Sample>): Sample[] {
  let tokens = 0;
  const out: Sample[] = [];
  for (const s of samples) {
    if (out.length > 0 && tokens + s.planned > CHECK_TOKENS) break;
    out.push(s);
    tokens += s.planned;
  }
  return out;
}

/** Counts each content with at most PARALLEL counts in flight; results in order. */
export async function countAll(contents: readonly RequestContent[], count: CountText): Promise<number[]> {
  const out: number[] = new Array(contents.length);
  let next = 0;
  const work = async (): Promise<void> => {
    for (let i = next++; i < contents.length; i = next++) out[i] = await count(contents[i]!);
  };
  await Promise.all(Array.from({ length: PARALLEL }, work));
  return out;
}

// The requests a class will send (open loop: its schedule; closed loop: the first indices), sampled.
function samplesOf(plan: Plan, runId: string, cls: TrafficClass, schedule: ClassSchedule): Iterable<Sample> {
  const total = schedule.closedLoop ? CHECK_SAMPLE : schedule.arrivalsNs.length;
  const indices = sampleIndices(`${plan.seed}:${cls.name}:length-check`, total);
  if (schedule.sessions) return sessionSamples(plan, runId, cls, schedule, indices);
  if (!variesPerRequest(cls)) return fixedSamples(plan, runId, cls, indices);
  const text = new RequestText(plan, cls, runId);
  const shapes = new ClassRequests(plan, cls);
  const r = schedule.requests;
  return lazy(indices, (i) => {
    const shape = r
      ? {
          inputTokens: r.inputTokens[i]!,
          outputTokens: r.outputTokens[i]!,
          ...(r.records.length > 0 && { record: r.records[i]! }),
          ...(r.hashIds.length > 0 && { hashIds: r.hashIds[i]! }),
        }
      : shapes.at(i);
    const built = text.build(i, shape);
    return { content: built.messages, planned: built.planned, requested: shape.inputTokens };
  });
}

function fixedSamples(plan: Plan, runId: string, cls: TrafficClass, indices: number[]): Sample[] {
  const c = plan.prompt_calibration?.[cls.name];
  const planned = cls.prompt.input_tokens as number;
  const fill = promptFill(plan.seed, cls.name, c?.prefix_words ?? 0, c?.words ?? 0, c?.pad_words ?? 0);
  const canary = cls.prompt.canary === true;
  // An embeddings request's inputs each carry a suffix on the head: sample i counts input i mod the batch size.
  const batch = batchedApi(classApi(cls, plan.target)) ? (cls.prompt.batch_size ?? 1) : 0;
  const head = (i: number) => (batch > 0 ? batchInputHead(promptHead(runId, cls.name, i), i % batch) : promptHead(runId, cls.name, i));
  return indices.map((i) => ({
    content: promptText(fill, canary ? canaryMarker(runId, cls.name, plan.seed, i) : head(i), canary),
    planned,
    requested: planned,
  }));
}

// Session s's first turn (its whole request) and, for a later turn, its new user message alone.
function sessionSamples(plan: Plan, runId: string, cls: TrafficClass, schedule: ClassSchedule, sessions: number[]): Sample[] {
  const text = new RequestText(plan, cls, runId);
  const shapes = schedule.sessions!;
  const count = schedule.arrivalsNs.length;
  return sessions.map((s) => {
    const turns = shapes.turns[s]!;
    const turn = 1 + Math.floor(rngFromKey(`${plan.seed}:${cls.name}:length-check-turn:${s}`).next() * turns);
    const tokens = shapes.userTokens[s]![turn - 1]!;
    const message = text.userMessage(turnRequestIndex(s, turn, count), turn, tokens);
    const e = text.vocab.request_tokens;
    return { content: message, planned: e + text.userMessageTokens(turn, tokens), requested: e + tokens };
  });
}

/** `min(total, CHECK_SAMPLE)` distinct indices below `total`, seeded, in the order drawn (all of them, in order, when few). */
export function sampleIndices(key: string, total: number): number[] {
  if (total <= CHECK_SAMPLE) return Array.from({ length: total }, (_, i) => i);
  const rng = rngFromKey(key);
  const chosen = new Set<number>();
  while (chosen.size < CHECK_SAMPLE) chosen.add(Math.floor(rng.next() * total));
  return [...chosen];
}

// Samples built one at a time as they are taken, so a long context's bodies past the budget are never made.
function* lazy(indices: readonly number[], build: (i: number) => Sample): Iterable<Sample> {
  for (const i of indices) yield build(i);
}
