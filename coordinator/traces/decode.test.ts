import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeTraceRequest } from './otlp-proto.js';
import { decodeTraceRequestJson, OtlpDecodeError } from './span.js';

// Written by the official OpenTelemetry JS serializers (test/fixtures/otlp/README.md).
const PB = new Uint8Array(readFileSync(new URL('../../test/fixtures/otlp/spans.pb', import.meta.url)));
const JSON_TEXT = readFileSync(new URL('../../test/fixtures/otlp/spans.json', import.meta.url), 'utf8');

describe('OTLP trace export requests', () => {
  it('decode from protobuf and from JSON to the same spans, with what vLLM puts in them', () => {
    const fromPb = decodeTraceRequest(PB);
    const fromJson = decodeTraceRequestJson(JSON_TEXT);
    expect(fromPb).toEqual(fromJson);
    expect(fromPb).toHaveLength(2);
    const [a, b] = fromPb;
    expect(a).toMatchObject({
      traceId: '6c6f616466666c656574000100000000',
      parentSpanId: '0001000000000000',
      name: 'llm_request',
      startUnixNs: 1796415448030000000n,
      resource: { 'service.name': 'vllm', 'host.name': 'gpu-node-01' },
    });
    expect(a!.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(a!.attributes).toMatchObject({
      'gen_ai.request.id': 'cmpl-lf-0001-42',
      'gen_ai.usage.prompt_tokens': 2048,
      'gen_ai.latency.time_in_queue': 0.0125,
      'gen_ai.latency.time_to_first_token': 0.0435,
    });
    // end = start + e2e (0.2235 s), first_token at start + ttft, as the generator set them.
    expect(Number(a!.endUnixNs - a!.startUnixNs) / 1e9).toBeCloseTo(0.2235, 6);
    expect(a!.events.map((e) => [e.name, Number(e.timeUnixNs - a!.startUnixNs) / 1e9])).toEqual([
      ['first_token', expect.closeTo(0.0435, 6)],
    ]);
    expect(b!.attributes['gen_ai.request.id']).toBe('cmpl-lf-0001-43');
  });

  it('refuse what does not decode, whatever the cut, never with anything but a decode error', () => {
    // Every truncation of the protobuf body either decodes to fewer spans or is refused as malformed.
    for (let n = 0; n < PB.length; n++) {
      try {
        expect(decodeTraceRequest(PB.subarray(0, n)).length).toBeLessThanOrEqual(2);
      } catch (err) {
        expect(err, `cut at ${n}`).toBeInstanceOf(OtlpDecodeError);
      }
    }
    expect(() => decodeTraceRequest(Uint8Array.of(0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f))).toThrow(OtlpDecodeError);
    expect(() => decodeTraceRequestJson('{"resourceSpans": 3}')).toThrow(OtlpDecodeError);
    expect(() => decodeTraceRequestJson('not json')).toThrow(OtlpDecodeError);
    expect(() =>
      decodeTraceRequestJson('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz","spanId":"0102030405060708"}]}]}]}'),
    ).toThrow(/traceId is not 16 bytes of hex/);
  });
});
