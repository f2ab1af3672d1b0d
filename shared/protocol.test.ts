import { pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import type { Message } from './protocol.js';
import {
  checkUpgrade,
  decodeAgentMessage,
  decodeCoordinatorMessage,
  decodeMessage,
  encodeMessage,
  PROTOCOL_HEADER,
  PROTOCOL_VERSION,
} from './protocol.js';

const health = { schedule_lag_p99_ms: 1.5, schedule_lag_max_ms: 3, event_loop_delay_p99_ms: 2, event_loop_delay_max_ms: 4, cpu_ms: 10 };
const samples: Message[] = [
  {
    type: 'hello',
    protocol: PROTOCOL_VERSION,
    agent_id: 'a1',
    host: 'h',
    pid: 1,
    clock_domain_id: 'ptp:rack-a',
    clock_domain_declared: true,
  },
  { type: 'probe_reply', seq: 3, t1_ns: 1791200544279383717n, t2_ns: 1791200544279383999n, t3_ns: 1791200544279384001n },
  { type: 'prepared', prep_ms: 1.25, planned_requests: 10 },
  { type: 'armed', start_local_ns: 1791200544279383717n },
  { type: 'started', first_send_error_ns: 1234, rseq: 1 },
  { type: 'heartbeat', in_flight: 1, sent: 2, done: 1, errors: 0, health },
  { type: 'interval', second: 4, classes: { rt: { issued: 1, completed: 1, failed: 0, histograms: { ttft: 'HISTFAAA' } } }, rseq: 2 },
  { type: 'final', windows: { rt: { all: { ttft: 'HISTFAAA' } } }, health, records: 3, rseq: 3 },
  { type: 'failed', code: 'LF_AGENT_FAILED', message: 'x', rseq: 4 },
  { type: 'joined', secret: 's' },
  { type: 'resume', run_id: 'r', acked: 7 },
  { type: 'welcome', agent_index: 0, agent_count: 2, run_id: 'r' },
  { type: 'probe', seq: 1, t1_ns: 5n },
  { type: 'arm', start_local_ns: 7n },
  { type: 'ack', seq: 9 },
  { type: 'stop', reason: 'user' },
  { type: 'abort', reason: 'late' },
];

describe('protocol codec', () => {
  it('round-trips every message, bigints exact', () => {
    for (const m of samples) expect(decodeMessage(encodeMessage(m))).toEqual(m);
  });

  it('rejects frames that are not msgpack, not a known message, or mistyped', () => {
    expect(() => decodeMessage(Buffer.from([0xd9, 0x20, 0x61]))).toThrow(/not msgpack/);
    expect(() => decodeMessage(pack({ type: 'nope' }))).toThrow(/unknown message type/);
    expect(() => decodeMessage(pack([1, 2]))).toThrow(/not a message object/);
    expect(() => decodeMessage(pack({ type: 'ack', seq: '1' }))).toThrow('ack.seq: expected number, got string');
    expect(() => decodeMessage(pack({ type: 'arm', start_local_ns: 5 }))).toThrow('arm.start_local_ns: expected bigint, got number');
    // A message that must arrive is refused without its sequence number: it could not be acknowledged.
    expect(() => decodeMessage(pack({ type: 'records', seq: 0, rows: [] }))).toThrow('records.rseq: expected number, got other');
  });

  it('knows which side may send what', () => {
    expect(() => decodeAgentMessage(encodeMessage({ type: 'ack', seq: 1 }))).toThrow(/agents may not send ack/);
    expect(() => decodeCoordinatorMessage(encodeMessage(samples[0]!))).toThrow(/coordinator may not send hello/);
  });

  it('refuses a wrong or missing token and another protocol version at the upgrade', () => {
    const ok = { authorization: 'Bearer s3cret', [PROTOCOL_HEADER]: String(PROTOCOL_VERSION) };
    expect(checkUpgrade(ok, 's3cret')).toBeNull();
    expect(checkUpgrade({ ...ok, authorization: 'Bearer nope' }, 's3cret')?.status).toBe(401);
    expect(checkUpgrade({ [PROTOCOL_HEADER]: '1' }, 's3cret')?.status).toBe(401);
    const mismatch = checkUpgrade({ ...ok, [PROTOCOL_HEADER]: '99' }, 's3cret');
    expect(mismatch?.status).toBe(426);
    expect(mismatch?.message).toMatch(/coordinator speaks protocol 3, agent sent 99/);
  });
});
