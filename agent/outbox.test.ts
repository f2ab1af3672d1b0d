import { describe, expect, it } from 'vitest';
import { SeqReceiver } from '../shared/delivery.js';
import type { AgentMessage } from '../shared/protocol.js';
import { Outbox } from './outbox.js';

const interval = (second: number): AgentMessage => ({ type: 'interval', second, classes: {} });
const records = (seq: number): AgentMessage => ({ type: 'records', seq, rows: [] });
const final: AgentMessage = {
  type: 'final',
  windows: {},
  health: { schedule_lag_p99_ms: null, schedule_lag_max_ms: null, event_loop_delay_p99_ms: 0, event_loop_delay_max_ms: 0, cpu_ms: 0 },
  records: 0,
};

function sink(): { sent: AgentMessage[]; send(m: AgentMessage): void } {
  const sent: AgentMessage[] = [];
  return { sent, send: (m) => void sent.push(m) };
}

const label = (m: AgentMessage): string =>
  `${m.type}${m.type === 'interval' ? m.second : m.type === 'records' ? m.seq : ''}#${'rseq' in m ? m.rseq : '-'}`;

describe('Outbox', () => {
  it('numbers what must arrive, resends everything unacknowledged in order, drops perishable frames while down', () => {
    const o = new Outbox();
    const dead = sink();
    o.up(dead);
    o.send(records(0));
    o.send(interval(1));
    o.send(records(1));
    expect(o.ack(1).map(label)).toEqual(['records0#1']);
    o.down();
    o.send(interval(2));
    o.send({ type: 'heartbeat' } as AgentMessage);
    const fresh = sink();
    expect(o.up(fresh, 1)).toMatchObject({ resent: 3, queued: 0 });
    expect(fresh.sent.map(label)).toEqual(['interval1#2', 'records1#3', 'interval2#4']);
  });

  it('keeps final (and intervals queued during an outage) through two cuts in a row; a resent final lands once', () => {
    const o = new Outbox();
    const coordinator = new SeqReceiver();
    const taken: string[] = [];
    // The coordinator side of each link: takes the next in sequence, drops duplicates, acks cumulatively.
    const link = (alive: () => boolean) => ({
      send(m: AgentMessage) {
        if (!alive() || !('rseq' in m)) return;
        const r = coordinator.receive(m.rseq!);
        if (r === 'take') taken.push(label(m));
        if (r !== 'gap') acks.push(coordinator.hwm);
      },
    });
    const acks: number[] = [];
    let firstAlive = true;
    o.up(link(() => firstAlive));
    o.send(records(0));
    o.send(interval(0));
    // The first link dies silently: what follows is swallowed.
    firstAlive = false;
    o.send(interval(1));
    o.down();
    o.send(interval(2)); // queued during the outage
    o.send(records(1));
    // Second link: resumed at the mark the coordinator has; it dies before any ack comes back.
    let secondAlive = true;
    const second = link(() => secondAlive);
    o.up(second, coordinator.hwm);
    expect(taken).toEqual(['records0#1', 'interval0#2', 'interval1#3', 'interval2#4', 'records1#5']);
    secondAlive = false;
    o.send(final); // swallowed by the second dead link
    o.down();
    // Third link: whatever the second delivered is not resent twice, final arrives, once.
    expect(o.pending).toBe(4);
    const third = sink();
    const live = link(() => true);
    const r = o.up(
      {
        send: (m) => {
          third.sent.push(m);
          live.send(m);
        },
      },
      coordinator.hwm,
    );
    expect(r.covered.map(label)).toEqual(['interval1#3', 'interval2#4', 'records1#5']);
    expect(third.sent.map(label)).toEqual(['final#6']);
    expect(taken.at(-1)).toBe('final#6');
    // A duplicate of final (its ack was lost, it is resent) is dropped and acknowledged again.
    link(() => true).send(third.sent[0]!);
    expect(taken.filter((t) => t.startsWith('final'))).toHaveLength(1);
    expect(coordinator.duplicates).toBe(1);
    expect(o.ack(coordinator.hwm).map(label)).toEqual(['final#6']);
    expect(o.pending).toBe(0);
  });

  it('resolves a wait for final only when an ack covers it, and a new run starts a new sequence space', async () => {
    const o = new Outbox();
    o.up(sink());
    const rseq = o.send(final);
    let handedOver = false;
    const waiting = o.acked(rseq).then(() => (handedOver = true));
    o.ack(rseq - 1);
    await Promise.resolve();
    expect(handedOver).toBe(false);
    o.ack(rseq);
    await waiting;
    expect(handedOver).toBe(true);
    o.reset();
    expect(o.send(interval(0))).toBe(1);
  });
});

describe('SeqReceiver', () => {
  it('takes the next, drops and counts duplicates, refuses a gap', () => {
    const r = new SeqReceiver();
    expect([1, 2, 2, 4, 3, 1].map((s) => r.receive(s))).toEqual(['take', 'take', 'duplicate', 'gap', 'take', 'duplicate']);
    expect(r).toMatchObject({ hwm: 3, duplicates: 2, gaps: 1 });
  });
});
