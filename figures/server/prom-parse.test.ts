import { describe, expect, it } from 'vitest';
import { familyOf, parseExposition, parseSampleLine } from './prom-parse.js';

describe('parseExposition', () => {
  it('reads names with colons, labels, HELP/TYPE and histograms', () => {
    const text = [
      '# HELP vllm:num_requests_running Requests in the running batch.',
      '# TYPE vllm:num_requests_running gauge',
      'vllm:num_requests_running{model_name="m"} 12',
      '# TYPE llm_d_epp_flow_control_request_queue_duration_seconds histogram',
      'llm_d_epp_flow_control_request_queue_duration_seconds_bucket{fairness_id="rt",priority="100",le="0.1"} 3',
      'llm_d_epp_flow_control_request_queue_duration_seconds_bucket{fairness_id="rt",priority="100",le="+Inf"} 4',
      'llm_d_epp_flow_control_request_queue_duration_seconds_sum{fairness_id="rt",priority="100"} 1.25',
      'llm_d_epp_flow_control_request_queue_duration_seconds_count{fairness_id="rt",priority="100"} 4',
      'process_start_time_seconds 1.7912e+09',
      '',
    ].join('\n');
    const p = parseExposition(text);
    expect(p.problems).toEqual([]);
    expect(p.samples).toHaveLength(6);
    expect(p.samples[0]).toEqual({ name: 'vllm:num_requests_running', labels: { model_name: 'm' }, value: 12, timestampMs: null });
    expect(p.samples[2]!.labels).toEqual({ fairness_id: 'rt', priority: '100', le: '+Inf' });
    expect(p.samples[3]!.value).toBe(1.25);
    expect(p.samples[5]!.value).toBe(1.7912e9);
    expect(p.types.get('vllm:num_requests_running')).toBe('gauge');
    expect(familyOf(p.samples[3]!.name, p.types)).toBe('llm_d_epp_flow_control_request_queue_duration_seconds');
    expect(familyOf('foo_count', p.types)).toBe('foo_count');
  });

  it('undoes label escapes and tolerates spaces and CRLF', () => {
    const p = parseExposition('m{a="x\\"y",b="back\\\\slash", c = "line\\nbreak" ,} 1\r\n');
    expect(p.problems).toEqual([]);
    expect(p.samples[0]!.labels).toEqual({ a: 'x"y', b: 'back\\slash', c: 'line\nbreak' });
  });

  it('reads NaN, ±Inf, exponents and timestamps; drops an exemplar', () => {
    expect(parseSampleLine('a NaN')).toMatchObject({ value: Number.NaN });
    expect(parseSampleLine('a +Inf')).toMatchObject({ value: Number.POSITIVE_INFINITY });
    expect(parseSampleLine('a -Inf 1700000000000')).toMatchObject({ value: Number.NEGATIVE_INFINITY, timestampMs: 1700000000000 });
    expect(parseSampleLine('a -1.5e-3')).toMatchObject({ value: -0.0015 });
    expect(parseSampleLine('a_bucket{le="1"} 3 # {trace_id="abc"} 0.5')).toMatchObject({ value: 3, timestampMs: null });
  });

  it('reports every garbled line with its number and never throws', () => {
    const text = [
      'ok 1',
      '<html>oops</html>',
      'x{a="1" 2',
      'y{a="1"} two',
      'z 1 2 3',
      'w{a="\\q"} 1',
      'v{1a="x"} 1',
      'u{a="1",a="2"} 1',
    ].join('\n');
    const p = parseExposition(text);
    expect(p.samples.map((s) => s.name)).toEqual(['ok']);
    expect(p.problems).toHaveLength(7);
    expect(p.problems[0]).toMatch(/^line 2: expected a metric name/);
    expect(p.problems[1]).toMatch(/^line 3: x: expected , or }/);
    expect(p.problems[2]).toMatch(/^line 4: y: "two" is not a number/);
    expect(p.problems[3]).toMatch(/^line 5: z: expected "value \[timestamp\]"/);
    expect(p.problems[4]).toMatch(/unknown escape/);
    expect(p.problems[5]).toMatch(/bad label name/);
    expect(p.problems[6]).toMatch(/appears twice/);
  });

  it('reads binary noise as problems, not an exception', () => {
    const noise = Array.from({ length: 2000 }, (_, i) => String.fromCharCode((i * 7919) % 256)).join('');
    expect(() => parseExposition(noise)).not.toThrow();
    expect(parseExposition(noise).problems.length).toBeGreaterThan(0);
  });
});
