import { describe, expect, it } from 'vitest';
import { blankRecord } from '../shared/metrics.js';
import type { PromptCalibration, TrafficClass } from '../shared/plan.js';
import type { ExpectedShape } from './class-shape.js';
import { ClassShape } from './class-shape.js';
import { promptExactness } from './prompt-exactness.js';

const CLS: TrafficClass = {
  name: 'rt',
  prompt: { input_tokens: { distribution: 'uniform', min: 4, max: 64 }, output_tokens: 8 },
  load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 5, rate_per_s: 1 }] },
};

const COUNTED: PromptCalibration = {
  method: 'server-tokenize',
  prefix_words: 0,
  words: 0,
  pad_words: 0,
  counted_prompt_tokens: null,
  attempts: 0,
  note: 'per request',
};

// Requests asking 4..63 tokens where the template, opener and head alone count 12: the first 8 are built to 12.
const floorOf12: ExpectedShape = (i) => ({ inputTokens: Math.max(4 + i, 12), outputTokens: 8, asked: 4 + i });

function shapeOf(n: number, expected: ExpectedShape, failEvery = 0): ClassShape {
  const s = new ClassShape(CLS, expected);
  for (let i = 0; i < n; i++) {
    const failed = failEvery > 0 && i % failEvery === 0;
    s.add(0, { ...blankRecord('rt', i, 0), status: failed ? 'http_error' : 'ok', http_status: failed ? 429 : 200, prompt_tokens: null });
  }
  return s;
}

describe('prompt exactness of an exact-token class', () => {
  it('names the rows built to the template floor beside the rows sent exact, failed requests included', () => {
    const s = shapeOf(60, floorOf12, 7);
    expect(promptExactness(COUNTED, s.rows)).toEqual({
      rows: 60,
      exact_rows: 52,
      not_exact: [
        {
          reason: 'template_floor',
          rows: 8,
          first_request_indices: [0, 1, 2, 3, 4, 5, 6, 7],
          why: expect.stringMatching(/^asked for fewer prompt tokens than the template, opener and head alone count/),
        },
      ],
    });
  });

  it('says every row was sent in words when counting on the target failed', () => {
    const s = shapeOf(10, floorOf12);
    const failed = { ...COUNTED, method: 'words-unverified' as const, count_error: 'tokenize: HTTP 500' };
    expect(promptExactness(failed, s.rows)).toEqual({
      rows: 10,
      exact_rows: 0,
      not_exact: [
        {
          reason: 'count_failed',
          rows: 10,
          first_request_indices: null,
          why: 'counting on the target failed before load (tokenize: HTTP 500), so every request was sized in words, one per intended token',
        },
      ],
    });
  });

  it('tells a class of identical requests whose filler search ended off the asked length from one at the floor', () => {
    const fixed =
      (counted: number, asked: number): ExpectedShape =>
      () => ({ inputTokens: counted, outputTokens: 8, asked });
    const searched = { ...COUNTED, words: 40, counted_prompt_tokens: 63 };
    expect(promptExactness(searched, shapeOf(5, fixed(63, 64)).rows)).toMatchObject({
      exact_rows: 0,
      not_exact: [{ reason: 'count_missed', rows: 5, why: expect.stringMatching(/ended at 63 prompt tokens/) }],
    });
    expect(promptExactness({ ...searched, counted_prompt_tokens: 65 }, shapeOf(5, fixed(65, 64)).rows)).toMatchObject({
      not_exact: [{ reason: 'count_missed', rows: 5 }],
    });
    // No filler at all and still above the asked length: the template floor.
    const floor = { ...COUNTED, counted_prompt_tokens: 12 };
    expect(promptExactness(floor, shapeOf(5, fixed(12, 4)).rows)).toMatchObject({
      not_exact: [{ reason: 'template_floor', rows: 5, first_request_indices: [0, 1, 2, 3, 4] }],
    });
    expect(promptExactness({ ...searched, counted_prompt_tokens: 64 }, shapeOf(5, fixed(64, 64)).rows)).toMatchObject({
      exact_rows: 5,
      not_exact: [],
    });
  });

  it("reports a session's later turns apart, and nothing for a class never meant to be exact", () => {
    const sessions: ExpectedShape = (i) => ({ inputTokens: 100 + i, outputTokens: 8, exact: i % 3 === 0, asked: 100 + i });
    expect(promptExactness(COUNTED, shapeOf(9, sessions).rows)).toMatchObject({
      rows: 9,
      exact_rows: 3,
      not_exact: [{ reason: 'later_turns', rows: 6 }],
    });
    expect(promptExactness({ ...COUNTED, method: 'words-unverified' }, shapeOf(9, sessions).rows)).toBeNull();
    expect(promptExactness(undefined, shapeOf(9, sessions).rows)).toBeNull();
  });
});
