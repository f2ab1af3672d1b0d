// Prompt-length calibration, before any load: each class's filler is sized so that one whole
// request counts its input_tokens on the target's tokenizer — the server's tokenize endpoint where
// it has one, else the tokenizer file the plan names, else words (one per intended token, unverified). The result travels in the plan as
// run (`prompt_calibration`), so every agent builds exactly the text that was counted.

import type { Plan, PromptCalibration, PromptLengthMethod, Target, TrafficClass } from '../../shared/plan.js';
import { canaryMarker, promptFill, promptHead, promptText, uncalibratedWords } from '../../shared/prompt-text.js';
import { variesPerRequest } from '../../shared/request-shape.js';
import { loadTokenizerFile } from '../../shared/tokenizer-file.js';
import { searchWords } from './search.js';
import type { CountText } from './server-tokenize.js';
import { serverCounter } from './server-tokenize.js';

/** A way to count a whole request, or why there is none. */
type Working = { method: PromptLengthMethod; count: CountText; note: string };
type Counter = Working | { method: null; note: string };

/** The plan with `prompt_calibration` filled in for every class. */
export async function calibratePlan(plan: Plan, runId: string, log: (line: string) => void): Promise<Plan> {
  if (!plan.target) throw new Error('calibration needs the resolved target');
  const counter = await findCounter(plan.target, promptText(promptFill(plan.seed, 'probe', 0, 8), promptHead(runId, 'probe', 0)));
  const calibration: Record<string, PromptCalibration> = {};
  for (const cls of plan.classes) {
    calibration[cls.name] = perRequest(cls)
      ? PER_REQUEST
      : counter.method === null
        ? unverified(cls, counter.note)
        : await countedClass(plan, runId, cls, counter).catch((err: unknown) =>
            unverified(cls, `calibration failed: ${(err as Error).message}`),
          );
    log(describe(cls, calibration[cls.name]!));
  }
  return { ...plan, prompt_calibration: calibration };
}

// The server's tokenize endpoint first (it is what counts usage), then the plan's tokenizer file.
async function findCounter(target: Target, probe: string): Promise<Counter> {
  const server = await serverCounter(target, probe);
  if (server.count) return { method: 'server-tokenize', count: server.count, note: server.note };
  if (!target.tokenizer) return { method: null, note: server.note };
  try {
    const file = await loadTokenizerFile(target.tokenizer);
    return { method: 'tokenizer-file', count: async (text) => file.countRequest(text, target.api), note: `${file.note}; ${server.note}` };
  } catch (err) {
    return { method: null, note: `${(err as Error).message}; ${server.note}` };
  }
}

async function countedClass(plan: Plan, runId: string, cls: TrafficClass, counter: Working): Promise<PromptCalibration> {
  // The text the agents send: the head (a canary marker with prompt.canary) and the canary instruction counted too.
  const canary = cls.prompt.canary === true;
  const head = canary ? canaryMarker(runId, cls.name, plan.seed, 0) : promptHead(runId, cls.name, 0);
  const found = await searchWords(cls.prompt.input_tokens as number, sharedTokens(cls), (prefixWords, words, padWords) =>
    counter.count(promptText(promptFill(plan.seed, cls.name, prefixWords, words, padWords), head, canary)),
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
// are sized word by word per request (agent/workload-prompt.ts), so there is no one length to calibrate.
function perRequest(cls: TrafficClass): boolean {
  return variesPerRequest(cls) || cls.load.model === 'sessions';
}

const PER_REQUEST: PromptCalibration = {
  method: 'words-unverified',
  prefix_words: 0,
  words: 0,
  pad_words: 0,
  counted_prompt_tokens: null,
  attempts: 0,
  note: "each request is sized in words from its own length (distribution, dataset, trace or sessions): not calibrated on the target's tokenizer",
};

function unverified(cls: TrafficClass, note: string): PromptCalibration {
  const { prefixWords, words } = uncalibratedWords(cls.prompt.input_tokens as number, sharedTokens(cls));
  return { method: 'words-unverified', prefix_words: prefixWords, words, pad_words: 0, counted_prompt_tokens: null, attempts: 0, note };
}

function sharedTokens(cls: TrafficClass): number {
  return cls.prompt.cache === 'shared' ? (cls.prompt.shared_prefix_tokens ?? 0) : 0;
}

function describe(cls: TrafficClass, c: PromptCalibration): string {
  const counted = c.counted_prompt_tokens === null ? 'not counted' : `counted ${c.counted_prompt_tokens} tokens in ${c.attempts} call(s)`;
  return `prompt length of ${cls.name}: ${c.method}, ${c.prefix_words + c.words + c.pad_words} filler words for ${cls.prompt.input_tokens} tokens, ${counted} (${c.note})`;
}
