import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../shared/metrics.js';
import { blankRecord } from '../shared/metrics.js';
import type { TrafficClass } from '../shared/plan.js';
import { ClassShape } from './class-shape.js';

const CLS: TrafficClass = {
  name: 'rt',
  prompt: { input_tokens: 100, output_tokens: 8 },
  load: { model: 'poisson', phases: [{ start_s: 2, duration_s: 5, rate_per_s: 1 }] },
};

function rec(over: Partial<RequestRecord>): RequestRecord {
  return {
    ...blankRecord('rt', 0, 2e9),
    status: 'ok',
    http_status: 200,
    sent_ns: 2e9 + 1e6,
    prompt_tokens: 100,
    completion_tokens: 8,
    output_token_source: 'usage',
    ...over,
  };
}

describe('ClassShape', () => {
  it('counts prompts outside ±10%, output mismatches and unclean 200s', () => {
    const s = new ClassShape(CLS);
    s.add(0, rec({ prompt_tokens: 90 })); // exactly 10% off: inside
    s.add(0, rec({ prompt_tokens: 111 })); // 11% off
    s.add(0, rec({ completion_tokens: 7 }));
    s.add(1, rec({ status: 'incomplete_stream', completion_tokens: null, prompt_tokens: null }));
    s.add(1, rec({ status: 'http_error', http_status: 429, prompt_tokens: null }));
    expect(s).toMatchObject({
      ok: 3,
      promptTokensMin: 90,
      promptTokensMax: 111,
      promptOutside: 1,
      completionMismatch: 1,
      http200NotOk: 1,
    });
  });

  it('counts output sources; only usage counts can mismatch, and an unreported prompt is not outside', () => {
    const s = new ClassShape(CLS);
    s.add(0, rec({}));
    s.add(0, rec({ prompt_tokens: null, completion_tokens: 5, output_token_source: 'chunks' }));
    s.add(0, rec({ prompt_tokens: null, completion_tokens: 9, output_token_source: 'tokenizer' }));
    expect(s).toMatchObject({ ok: 3, promptOutside: 0, promptUnreported: 2, completionMismatch: 0 });
    expect(s.outputSources).toEqual({ usage: 1, tokenizer: 1, chunks: 1 });
  });

  it('measures the start spread from each agent first request', () => {
    const s = new ClassShape(CLS);
    s.add(0, rec({ intended_ns: 2.5e9, sent_ns: 2.5e9 + 4e6 }));
    s.add(0, rec({ intended_ns: 2e9, sent_ns: 2e9 + 1e6 })); // agent 0's first: 1 ms late
    s.add(1, rec({ intended_ns: 2.1e9, sent_ns: 2.1e9 + 31e6 })); // agent 1's first: 31 ms late
    expect(s.startSpreadMs()).toBe(30);
    const closed = new ClassShape({ ...CLS, load: { model: 'concurrency', phases: [{ start_s: 2, duration_s: 5, concurrency: 2 }] } });
    closed.add(0, rec({ intended_ns: null, sent_ns: 2e9 + 2e6 }));
    closed.add(1, rec({ intended_ns: null, sent_ns: 2e9 + 9e6 }));
    expect(closed.startSpreadMs()).toBe(7);
    expect(new ClassShape(CLS).startSpreadMs()).toBeNull();
  });
});
