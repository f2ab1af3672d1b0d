// Prompt-length calibration, before any load, through the target's own tokenizer — its tokenize
// endpoint where it has one, else the tokenizer file the plan names, else words (one per intended
// token, unverified):
// - classes of identical requests: the filler is sized so one whole request counts input_tokens;
// - classes whose requests differ (distributions, traces, datasets, sessions): a token-exact
//   vocabulary is found (vocabulary.ts), so each request's text counts its own planned tokens;
//   dataset records are counted and filtered on those counts;
// - then a seeded sample of every class's real bodies is counted (length-check.ts).
// The results travel in the plan as run (`prompt_calibration`, `prompt_vocabulary`), so every
// agent builds exactly the text that was counted.

import { batchedApi, batchInputHead, chatTemplated, classApi } from '../../shared/api-kinds.js';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import type { ApiKind, DatasetRecord, Plan, PromptCalibration, PromptLengthMethod, Target, TrafficClass } from '../../shared/plan.js';
import { canaryMarker, promptFill, promptHead, promptText, uncalibratedWords } from '../../shared/prompt-text.js';
import type { PromptVocabulary } from '../../shared/prompt-vocabulary.js';
import { uncountedVocabulary } from '../../shared/prompt-vocabulary.js';
import { classVocabulary, variesPerRequest } from '../../shared/request-shape.js';
import { datasetMessages, RequestText } from '../../shared/request-text.js';
import { buildSchedule } from '../../shared/schedule.js';
import { loadTokenizerFile } from '../../shared/tokenizer-file.js';
import { checkClass, countAll } from './length-check.js';
import { searchWords } from './search.js';
import type { CountText } from './server-tokenize.js';
import { serverCounter } from './server-tokenize.js';
import { findVocabulary } from './vocabulary.js';

/**
 * A way to count a whole request of a given API (with its chat template or without, as that API is
 * served: each class is counted as it sends, class.api included), or why there is none.
 */
type Working = { method: Exclude<PromptLengthMethod, 'words-unverified'>; countFor: (api: ApiKind) => CountText; note: string };
type Counter = Working | { method: null; note: string };

/** Dataset records counted one by one at most: beyond, the class is sized in words (unverified). */
export const MAX_COUNTED_RECORDS = 20_000;

/** The plan with `prompt_calibration` filled in for every class (and `prompt_vocabulary`, maybe `prompt_vocabularies`, where requests differ). */
export async function calibratePlan(plan: Plan, runId: string, log: (line: string) => void): Promise<Plan> {
  if (!plan.target) throw new Error('calibration needs the resolved target');
  const counter = await findCounter(plan.target, promptText(promptFill(plan.seed, 'probe', 0, 8), promptHead(runId, 'probe', 0)));
  let out: Plan = plan;
  const apis = [...new Set(plan.classes.filter(perRequest).map((cls) => classApi(cls, plan.target)))];
  if (apis.length > 0) {
    // The vocabulary of the first per-request class's API; and where another such class's API is
    // counted the other way (with the chat template or without), that way's own, since an empty
    // request and a further turn cost different tokens there.
    const find = async (api: ApiKind): Promise<PromptVocabulary> => {
      const found = counter.method === null ? null : await findVocabulary(counter.countFor(api), counter.method, counter.note);
      const vocabulary = found?.vocabulary ?? uncountedVocabulary(found ? found.note : counter.note);
      log(`prompt vocabulary (${api}): ${vocabulary.method}, ${vocabulary.note}`);
      return vocabulary;
    };
    const first = apis[0]!;
    out = { ...plan, prompt_vocabulary: await find(first) };
    const other = apis.find((api) => chatTemplated(api) !== chatTemplated(first));
    if (other) {
      const vocabulary = await find(other);
      const byApi = Object.fromEntries(apis.filter((api) => chatTemplated(api) === chatTemplated(other)).map((api) => [api, vocabulary]));
      out = { ...out, prompt_vocabularies: byApi };
    }
  }
  const calibration: Record<string, PromptCalibration> = {};
  for (const cls of plan.classes) {
    if (perRequest(cls)) {
      const vocabulary = classVocabulary(out, cls)!;
      const c = await perRequestClass(out, runId, cls, vocabulary, counter);
      // A counter that answered the probe yet found no token-exact vocabulary: the count failed.
      const failed = counter.method !== null && vocabulary.method === 'words-unverified' && c.calibration.method === 'words-unverified';
      calibration[cls.name] = failed ? { ...c.calibration, count_error: vocabulary.note } : c.calibration;
      if (c.records) out = withRecords(out, cls.name, c.records);
    } else
      calibration[cls.name] =
        counter.method === null
          ? unverified(cls, counter.note)
          : await countedClass(plan, runId, cls, counter).catch((err: unknown) => ({
              ...unverified(cls, `calibration failed: ${(err as Error).message}`),
              count_error: (err as Error).message,
            }));
  }
  out = dropUnfiltered({ ...out, prompt_calibration: calibration });
  if (counter.method !== null) await checkClasses(out, runId, counter);
  for (const cls of plan.classes) log(describe(cls, out.prompt_calibration![cls.name]!));
  return out;
}

// The server's tokenize endpoint first (it is what counts usage), then the plan's tokenizer file.
async function findCounter(target: Target, probe: string): Promise<Counter> {
  const server = await serverCounter(target, probe);
  if (server.count) return { method: 'server-tokenize', countFor: server.countFor, note: server.note };
  if (!target.tokenizer) return { method: null, note: server.note };
  try {
    const file = await loadTokenizerFile(target.tokenizer);
    return {
      method: 'tokenizer-file',
      countFor: (api) => async (text) => file.countRequest(text, api),
      note: `${file.note}; ${server.note}`,
    };
  } catch (err) {
    return { method: null, note: `${(err as Error).message}; ${server.note}` };
  }
}

async function countedClass(plan: Plan, runId: string, cls: TrafficClass, counter: Working): Promise<PromptCalibration> {
  // The text the agents send: the head (a canary marker with prompt.canary) and the canary instruction counted too.
  const canary = cls.prompt.canary === true;
  const head0 = canary ? canaryMarker(runId, cls.name, plan.seed, 0) : promptHead(runId, cls.name, 0);
  // An embeddings input is sized as sent: its head carries the input's suffix (the length check counts the others).
  const head = batchedApi(classApi(cls, plan.target)) ? batchInputHead(head0, 0) : head0;
  const found = await searchWords(cls.prompt.input_tokens as number, sharedTokens(cls), (prefixWords, words, padWords) =>
    counter.countFor(classApi(cls, plan.target))(promptText(promptFill(plan.seed, cls.name, prefixWords, words, padWords), head, canary)),
  );
  return {
    method: counter.method,
    prefix_words: found.prefixWords,
    words: found.words,
    pad_words: found.padWords,
    counted_prompt_tokens: found.counted,
    attempts: found.attempts,
    note: counter.note,
  };
}

// Classes whose requests each have their own length (a distribution, dataset, trace or sessions)
// are built per request from the vocabulary, so there is no one length to calibrate.
function perRequest(cls: TrafficClass): boolean {
  return variesPerRequest(cls) || cls.load.model === 'sessions';
}

// A per-request class is as exact as the vocabulary: counted words, or words assumed one token
// each. A dataset's records are counted as sent (head included) and filtered on those counts.
async function perRequestClass(
  plan: Plan,
  runId: string,
  cls: TrafficClass,
  vocabulary: PromptVocabulary,
  counter: Counter,
): Promise<{ calibration: PromptCalibration; records?: { records: DatasetRecord[]; tokens: number[] } }> {
  const base = {
    method: vocabulary.method,
    prefix_words: 0,
    words: 0,
    pad_words: 0,
    counted_prompt_tokens: null,
    attempts: 0,
    note:
      vocabulary.method === 'words-unverified'
        ? `each request sized in words, one per intended token (${vocabulary.note})`
        : `each request built from the target's one-token words: ${vocabulary.request_tokens} tokens for an empty request, ${vocabulary.opener_tokens} for the opener, ${vocabulary.head_words} head words, ${vocabulary.turn_tokens} per further turn (${vocabulary.note})`,
  };
  const dataset = cls.prompt.dataset;
  if (!dataset || counter.method === null) return { calibration: base };
  const all = plan.inputs!.unfiltered_datasets?.[cls.name] ?? plan.inputs!.datasets[cls.name]!;
  if (all.length > MAX_COUNTED_RECORDS)
    return {
      calibration: {
        ...base,
        method: 'words-unverified',
        note: `${all.length} records: more than ${MAX_COUNTED_RECORDS} are not counted one by one; sized in words`,
      },
    };
  const head = (cls.prompt.cache ?? 'unique') === 'unique' ? new RequestText(plan, cls, runId).head(0) : null;
  const counts = await countAll(
    all.map((r) => datasetMessages(r, head)),
    counter.countFor(classApi(cls, plan.target)),
  );
  const min = dataset.min_input_tokens ?? 1;
  const max = dataset.max_input_tokens ?? Number.MAX_SAFE_INTEGER;
  const keep = all.map((_, i) => i).filter((i) => counts[i]! >= min && counts[i]! <= max);
  if (keep.length === 0)
    throw new LoadfleetError(
      ErrorCode.PLAN_INVALID,
      `class ${cls.name}: no record of ${dataset.file} passes the length filters on the target's counts (${Math.min(...counts)}–${Math.max(...counts)} tokens)`,
      { exitCode: ExitCode.INVALID_INPUT },
    );
  const tokens = keep.map((i) => counts[i]!);
  return {
    calibration: {
      ...base,
      method: counter.method,
      attempts: all.length,
      record_tokens: tokens,
      note: `${all.length} records counted on the target (${keep.length} within the length filters), head and template included; ${base.note}`,
    },
    records: { records: keep.map((i) => all[i]!), tokens },
  };
}

function withRecords(plan: Plan, cls: string, r: { records: DatasetRecord[] }): Plan {
  const inputs = plan.inputs!;
  const files = inputs.files.map((f) => (f.class === cls && f.kind === 'dataset' ? { ...f, rows_used: r.records.length } : f));
  return { ...plan, inputs: { ...inputs, files, datasets: { ...inputs.datasets, [cls]: r.records } } };
}

// Every record was only needed to filter on the target's counts.
function dropUnfiltered(plan: Plan): Plan {
  if (!plan.inputs?.unfiltered_datasets) return plan;
  const { unfiltered_datasets: _, ...inputs } = plan.inputs;
  return { ...plan, inputs };
}

// A sample of each class's real bodies, counted: the result joins the class's calibration. A count
// that fails is kept as the class's check_error: request_shape reads it, and without usage a class
// whose bodies were never counted is not_evaluated rather than passed on nothing.
async function checkClasses(plan: Plan, runId: string, counter: Working): Promise<void> {
  const schedule = buildSchedule(plan);
  for (const [i, cls] of plan.classes.entries()) {
    const c = plan.prompt_calibration![cls.name]!;
    try {
      c.check = await checkClass(plan, runId, cls, schedule.classes[i]!, counter.countFor(classApi(cls, plan.target)));
    } catch (err) {
      c.check_error = (err as Error).message;
    }
  }
}

function unverified(cls: TrafficClass, note: string): PromptCalibration {
  const { prefixWords, words } = uncalibratedWords(cls.prompt.input_tokens as number, sharedTokens(cls));
  return { method: 'words-unverified', prefix_words: prefixWords, words, pad_words: 0, counted_prompt_tokens: null, attempts: 0, note };
}

function sharedTokens(cls: TrafficClass): number {
  return cls.prompt.cache === 'shared' ? (cls.prompt.shared_prefix_tokens ?? 0) : 0;
}

function describe(cls: TrafficClass, c: PromptCalibration): string {
  const check = c.check
    ? `; ${c.check.exact} of ${c.check.sampled} sampled bodies exact on the target, largest difference ${c.check.max_abs_difference}`
    : c.check_error !== undefined
      ? `; the pre-load count of sampled bodies FAILED: ${c.check_error}`
      : '';
  if (perRequest(cls)) return `prompt length of ${cls.name}: ${c.method}, per request${check} (${c.note})`;
  const counted = c.counted_prompt_tokens === null ? 'not counted' : `counted ${c.counted_prompt_tokens} tokens in ${c.attempts} call(s)`;
  return `prompt length of ${cls.name}: ${c.method}, ${c.prefix_words + c.words + c.pad_words} filler words for ${cls.prompt.input_tokens} tokens, ${counted}${check} (${c.note})`;
}
