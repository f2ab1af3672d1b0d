import { describe, expect, it } from 'vitest';
import type { AgentMessage } from '../shared/protocol.js';
import { Outbox } from './outbox.js';

const interval = (second: number): AgentMessage => ({ type: 'interval', second, classes: {} });
const records = (seq: number): AgentMessage => ({ type: 'records', seq, rows: [] });

function sink(): { sent: AgentMessage[]; send(m: AgentMessage): void } {
  const sent: AgentMessage[] = [];
  return { sent, send: (m) => void sent.push(m) };
}

describe('Outbox', () => {
  it('resends unacknowledged batches and the recent intervals a dead link may have swallowed, then what waited', () => {
    const o = new Outbox();
    const dead = sink();
    o.up(dead);
    o.send(records(0));
    o.send(interval(1));
    o.send(records(1));
    o.ack(0);
    o.down();
    o.send(interval(2));
    o.send({ type: 'heartbeat' } as AgentMessage);
    const fresh = sink();
    expect(o.up(fresh)).toEqual({ resent: 1, queued: 1 });
    expect(fresh.sent).toEqual([records(1), interval(1), interval(2)]);
  });

  it('keeps only the last 16 intervals, and a new run starts with none', () => {
    const o = new Outbox();
    o.up(sink());
    for (let s = 0; s < 20; s++) o.send(interval(s));
    o.down();
    const a = sink();
    o.up(a);
    expect(a.sent.map((m) => (m.type === 'interval' ? m.second : -1))).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    o.reset();
    o.down();
    const b = sink();
    o.up(b);
    expect(b.sent).toEqual([]);
  });
});
