import { describe, expect, it } from 'vitest';
import { ttftPartsSection, whereTtftWent } from './ttft-parts.js';

const band = (ttft: number, queue: number) => ({
  ttft_ms: ttft,
  requests: 3,
  parts: { to_server_ms: 1, queue_ms: queue, prefill_ms: 40, unaccounted_ms: 0.1, handoff_ms: null, from_server_ms: -0.2 },
});
const RUN = {
  field_definitions: {},
  server_spans: {
    receiver: { spans: 90, foreign: 2, refused: { malformed: 1, too_large: 0 } },
    clocks: {
      vllm: {
        kind: 'fitted',
        model: 'line',
        offset_ns: 250_111_305,
        offset_uncertainty_ns: 556_964,
        drift_ppm: -23.5,
        drift_uncertainty_ppm: 289.8,
        requests: 90,
      },
      'vllm-decode': {
        kind: 'fitted',
        model: 'line',
        offset_ns: 1e6,
        offset_uncertainty_ns: 1e6,
        drift_ppm: 3,
        drift_uncertainty_ppm: 14_000,
        requests: 9,
      },
      'vllm@replica-1': {
        kind: 'fitted',
        model: 'drift-unbounded',
        offset_ns: 2e6,
        offset_uncertainty_ns: 1e6,
        drift_ppm: null,
        drift_uncertainty_ppm: null,
        drift_limit_ppm: 10_000,
        slack_ns: 100_000,
        bounds_crossing: 2,
        end_bounds_crossing: 3,
        end_bounds_crossing_max_ns: 260_000,
        requests: 1,
      },
      old: { kind: 'inconsistent', requests: 5, reason: 'no line fits every joined request', caveat: 'keyed by service.name alone' },
    },
    classes: {
      rt: {
        windows: {
          all: { joined: 90, ttft_p50: band(372, 330), ttft_p95: band(695, 653), where_ttft_went: 'p95 TTFT 695 ms: 653 ms of it queued' },
          surge: { joined: 40, ttft_p50: band(500, 450), ttft_p95: band(800, 750) },
        },
      },
    },
  },
};

describe('where the TTFT went, in the report', () => {
  it('draws a p50 and a p95 bar per class and window, and says how sure each server clock is', () => {
    const html = ttftPartsSection(RUN);
    for (const label of ['rt p50', 'rt p95', 'rt surge p50', 'rt surge p95']) expect(html).toContain(`>${label}</text>`);
    // Each bar's parts, the negative leg (within the offset's uncertainty) drawn as nothing.
    expect(html).toContain('<title>queue: 653.0 ms</title>');
    expect(html).not.toContain('back from the server: -');
    expect(html).toContain('vllm: its clock reads 250.1 ms ± 0.6 ms from the run&#39;s (drift -23.5 ± 289.8 ppm, 90 requests)');
    expect(html).toContain('vllm-decode: its clock reads 1.0 ms ± 1.0 ms from the run&#39;s (drift known only to ± 14000 ppm, 9 requests)');
    expect(html).toContain(
      'vllm@replica-1: its clock reads 2.0 ms ± 1.0 ms from the run&#39;s (drift not bounded by this run: the offset holds for any within ±10000 ppm, 1 requests); 2 bounds crossed by up to 0.2 ms: each widened by 0.1 ms, and the uncertainty with them; 3 spans end after the client read their last byte (by up to 0.3 ms): their ends are not used',
    );
    expect(html).toContain('old: no line fits every joined request (one clock per service.name: its spans name no instance)');
    expect(html).toContain('90 spans received, 1 export requests refused, 2 spans of no request of this run');
    expect(whereTtftWent(RUN, 'rt')).toBe('p95 TTFT 695 ms: 653 ms of it queued');
  });

  it('is absent from a run without server spans', () => {
    expect(ttftPartsSection({})).toBe('');
    expect(whereTtftWent({}, 'rt')).toBeNull();
  });
});
