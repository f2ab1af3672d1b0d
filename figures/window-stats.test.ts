import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../shared/metrics.js';
import { blankRecord, metricNs } from '../shared/metrics.js';
import { meetsSlo } from './window-stats.js';

// A request intended at 0, sent 30 ms late (the client was behind), first token 80 ms after the send.
function late(): RequestRecord {
  return {
    ...blankRecord('rt', 0, 0),
    status: 'ok',
    http_status: 200,
    sent_ns: 30e6,
    first_output_ns: 110e6,
    first_content_ns: 110e6,
    done_ns: 200e6,
    completion_tokens: 10,
  };
}

describe('TTFT from the intended send', () => {
  it('keeps the delay the client added before sending', () => {
    expect(metricNs(late(), 'ttft')).toBe(80e6);
    expect(metricNs(late(), 'ttft_from_intended')).toBe(110e6);
    expect(metricNs({ ...late(), intended_ns: null }, 'ttft_from_intended')).toBeNull(); // closed loop
  });

  it('an SLO judges the TTFT its basis names', () => {
    const slo = { ttft_p95_ms: 100 };
    expect(meetsSlo(late(), slo)).toBe(true); // 80 ms from the send
    expect(meetsSlo(late(), { ...slo, basis: 'sent' })).toBe(true);
    expect(meetsSlo(late(), { ...slo, basis: 'intended' })).toBe(false); // 110 ms from the intended send
    expect(meetsSlo(late(), { ttft_p95_ms: 110, basis: 'intended' })).toBe(true); // the bound is inclusive
  });
});
