import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseExact, stringifyExact } from '../../shared/json.js';
import type { Plan } from '../../shared/plan.js';
import { runTraceTag, traceIdOf } from '../../shared/trace-context.js';
import { joinServerSpans } from './finish.js';

const RUN = '20261207T130000Z-clock-ab12';
const O = 1_796_000_000_000_000_000n;
const ms = (x: number): bigint => O + BigInt(Math.round(x * 1e6));
const COUNTS = {
  requests: 1,
  spans: 0,
  refused: { malformed: 0, too_large: 0, unsupported_media_type: 0, not_found: 0, bad_compression: 0 },
  by_trace_id: 0,
  by_request_id: 0,
  foreign: 0,
};

let dir: string | undefined;
afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

describe('the end-of-run join, one clock per server instance', () => {
  it('fits a replica keyed by its instance id, says a stepped clock keyed by its service name is inconsistent, and says which clock each request used', async () => {
    dir = mkdtempSync(join(tmpdir(), 'lf-finish-'));
    const tag = runTraceTag(RUN);
    const spans: string[] = [];
    const requests: string[] = [];
    for (let i = 0; i < 200; i++) {
      const t = i * 50;
      const replica = i % 2 === 0;
      // The replica reads 5 ms ahead; the other clock steps 80 ms halfway.
      const theta = replica ? 5 : i < 100 ? 0 : 80;
      spans.push(
        stringifyExact({
          class: 'c',
          request_index: i,
          joined_by: 'trace_id',
          trace_id: traceIdOf(tag, 0, i),
          service: replica ? 'vllm' : 'old',
          instance: replica ? 'r0' : null,
          instance_from: replica ? 'service.instance.id' : null,
          role: 'aggregate',
          start_unix_ns: ms(t + 0.1 + theta),
          end_unix_ns: ms(t + 20 + theta),
          first_token_unix_ns: ms(t + 2 + theta),
          latency_s: { time_to_first_token: 0.0019 },
        }),
      );
      requests.push(
        stringifyExact({
          class: 'c',
          request_index: i,
          status: 'ok',
          sent_unix_ns: ms(t),
          headers_unix_ns: ms(t + 2.1),
          first_content_unix_ns: ms(t + 2.1),
          done_unix_ns: ms(t + 20.1),
        }),
      );
    }
    writeFileSync(join(dir, 'spans.ndjson'), `${spans.join('\n')}\n`);
    writeFileSync(join(dir, 'requests.ndjson'), `${requests.join('\n')}\n`);
    const plan = { classes: [{ name: 'c' }] } as unknown as Plan;
    const section = await joinServerSpans({
      dir,
      runId: RUN,
      plan,
      runStartNs: O,
      runEndNs: ms(10_000),
      counts: COUNTS,
      ports: { http: 1, grpc: 2 },
    });
    const replica = section.clocks['vllm@r0']!;
    expect(replica).toMatchObject({ kind: 'fitted', service: 'vllm', instance: 'r0', keyed_by: 'service.instance.id', requests: 100 });
    expect(replica).not.toHaveProperty('caveat');
    if (replica.kind !== 'fitted') throw new Error(replica.kind);
    expect(Math.abs(replica.offset_ns - 5e6)).toBeLessThanOrEqual(replica.offset_uncertainty_ns);
    expect(Object.keys(section.clocks['old']!).sort()).toEqual(
      ['bounds', 'caveat', 'instance', 'keyed_by', 'kind', 'reason', 'requests', 'service', 'slack_ns'].sort(),
    );
    expect(section.clocks['old']).toMatchObject({ kind: 'inconsistent', keyed_by: 'service.name', requests: 100 });
    const rows = readFileSync(join(dir, 'requests.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => parseExact<Record<string, unknown>>(l));
    expect(rows[0]).toMatchObject({ span_clocks: 'vllm@r0', span_services: 'vllm' });
    expect(rows[1]).toMatchObject({ span_clocks: 'old', to_server_ms: null, span_offset_uncertainty_ns: null });
    // Each split request's uncertainty is its clock's at its own send: never more than the clock's.
    for (const r of rows.filter((_, i) => i % 2 === 0)) {
      expect(r.to_server_ms).not.toBeNull();
      expect(r.span_offset_uncertainty_ns as number).toBeLessThanOrEqual(replica.offset_uncertainty_ns);
    }
    expect(section.requests_joined).toBe(200);
  });
});
