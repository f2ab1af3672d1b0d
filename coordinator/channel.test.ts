import { describe, expect, it } from 'vitest';
import { channelMayMove } from '../shared/delivery.js';
import type { AgentMessage, CoordinatorMessage } from '../shared/protocol.js';
import { decodeCoordinatorMessage, PROTOCOL_VERSION } from '../shared/protocol.js';
import { AgentChannel } from './channel.js';
import type { Hello } from './server.js';
import { AgentConn } from './server.js';

const hello: Hello = {
  type: 'hello',
  protocol: PROTOCOL_VERSION,
  agent_id: 'a1',
  host: 'h',
  pid: 1,
  clock_domain_id: 'd',
  clock_domain_declared: false,
  epoch: 'e1',
};

// One fleet link: what the coordinator sends on it is decoded back, as the agent would see it.
function link(): { conn: AgentConn; sent: CoordinatorMessage[] } {
  const sent: CoordinatorMessage[] = [];
  const ws = { readyState: 1, send: (b: Buffer) => void sent.push(decodeCoordinatorMessage(b)), close() {}, terminate() {} };
  return { conn: new AgentConn(hello, '127.0.0.1:1', ws as never), sent };
}

const records = (rseq: number): AgentMessage => ({ type: 'records', seq: rseq - 1, rows: [], rseq });

describe('AgentChannel', () => {
  it('a fleet link serving three runs in a row: one ack per sequence number, no earlier run left listening', () => {
    const { conn, sent } = link();
    conn.onClose(() => {}); // the fleet's own subscription, which outlives runs
    const baseline = conn.listenerCount();
    const taken: string[][] = [];
    for (let run = 0; run < 3; run++) {
      const got: string[] = [];
      taken.push(got);
      const ch = new AgentChannel(conn, () => {});
      ch.onMessage((m) => got.push(`${m.type}:${'rseq' in m ? m.rseq : '-'}`));
      sent.length = 0;
      for (let rseq = 1; rseq <= 5; rseq++) conn.deliver(records(rseq));
      conn.deliver({ type: 'heartbeat', in_flight: 0, sent: 0, done: 0, errors: 0, health: {} as never });
      expect(sent).toEqual([1, 2, 3, 4, 5].map((seq) => ({ type: 'ack', seq })));
      ch.dispose();
      expect(conn.listenerCount()).toBe(baseline);
    }
    expect(taken).toEqual(
      Array.from({ length: 3 }, () => ['records:1', 'records:2', 'records:3', 'records:4', 'records:5', 'heartbeat:-']),
    );
  });

  it('drops a resent duplicate and acknowledges it again; holds back a gap; a new epoch starts a new sequence space', () => {
    const { conn, sent } = link();
    const ch = new AgentChannel(conn, () => {});
    const got: number[] = [];
    ch.onMessage((m) => 'rseq' in m && got.push(m.rseq!));
    for (const r of [1, 2, 2, 4, 3, 4]) conn.deliver(records(r));
    expect(got).toEqual([1, 2, 3, 4]);
    expect(sent.map((m) => (m.type === 'ack' ? m.seq : -1))).toEqual([1, 2, 2, 3, 4]);
    expect(ch.duplicates).toBe(1);
    // The agent's process restarted: its upload counts from 1 on the same channel.
    const { conn: restarted } = link();
    ch.attach(restarted, true);
    restarted.deliver(records(1));
    expect(got).toEqual([1, 2, 3, 4, 1]);
    // The old link is no longer listened to.
    conn.deliver(records(5));
    expect(got).toEqual([1, 2, 3, 4, 1]);
  });

  it('moves only along the written state machine; terminal phases stay', () => {
    const { conn } = link();
    const ch = new AgentChannel(conn, () => {});
    expect(ch.move('live')).toBe(false);
    expect(ch.move('armed') && ch.move('live') && ch.move('reconnecting') && ch.move('live') && ch.move('final')).toBe(true);
    expect(ch.move('lost')).toBe(false);
    expect(ch.phase).toBe('final');
    expect(channelMayMove('lost', 'live')).toBe(false);
  });
});
