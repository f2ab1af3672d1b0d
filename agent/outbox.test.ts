import { describe, expect, it } from 'vitest';
import { SeqReceiver } from '../shared/delivery.js';
import type { AgentMessage } from '../shared/protocol.js';
import { awaitFinalAck } from './hand-over.js';
import { BATCH_ROWS, BATCH_WINDOW, Outbox } from './outbox.js';

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

describe('Outbox flow control', () => {
  const rows = (n: number): AgentMessage => ({ type: 'records', seq: 0, rows: Array.from({ length: n }, () => ({}) as never) });

  it('at most BATCH_WINDOW record batches unacknowledged; the rest wait, folded up to BATCH_ROWS; final waits behind them; intervals do not', async () => {
    const o = new Outbox();
    const s = sink();
    o.up(s);
    for (let i = 0; i < BATCH_WINDOW; i++) o.send(rows(600));
    o.send(rows(600)); // waits
    o.send(rows(400)); // folded into the waiting one (1,000 rows)
    o.send(rows(1)); // a new waiting batch
    o.send(interval(7)); // goes at once
    expect(o.send(final)).toBe(0); // waits behind the batches
    let done = false;
    const all = o.allAcked().then(() => (done = true));
    expect(s.sent.map(label)).toEqual([...Array.from({ length: BATCH_WINDOW }, (_, i) => `records${i}#${i + 1}`), 'interval7#9']);
    expect(o.waiting).toBe(3);
    // One ack frees one slot: the folded batch goes; the next waits for another slot.
    o.ack(1);
    expect(s.sent.slice(9).map(label)).toEqual(['records8#10']);
    expect((s.sent[9] as { rows: unknown[] }).rows).toHaveLength(BATCH_ROWS);
    o.ack(2);
    expect(s.sent.slice(10).map(label)).toEqual(['records9#11', 'final#12']);
    expect(o.waiting).toBe(0);
    o.ack(11);
    await Promise.resolve();
    expect(done).toBe(false);
    o.ack(12);
    await all;
    expect(done).toBe(true);
  });

  it('what waits for the window is resent in order after a cut, numbered once', () => {
    const o = new Outbox();
    o.up(sink());
    for (let i = 0; i <= BATCH_WINDOW; i++) o.send(rows(BATCH_ROWS));
    o.down();
    const next = sink();
    o.up(next, 3);
    expect(next.sent.map(label)).toEqual(['records3#4', 'records4#5', 'records5#6', 'records6#7', 'records7#8', 'records8#9']);
    expect(o.waiting).toBe(0);
  });

  it('reset settles every waiter: acks that will never come reject with LF_UNACKED and the reason, never resolve', async () => {
    const o = new Outbox();
    o.up(sink());
    o.send(records(0));
    o.send(final);
    const one = o.acked(1);
    const all = o.allAcked();
    const covered = o.acked(0); // nothing waits at or below 0: settled at once
    await expect(covered).resolves.toBeUndefined();
    expect(o.reset('run r2 began')).toBe(2);
    for (const p of [one, all]) {
      const err = await p.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'LF_UNACKED' });
      expect((err as Error).message).toBe('2 message(s) never acknowledged: run r2 began');
    }
    // The new sequence space starts clean: nothing pending, numbering from 1, and waits that settle.
    expect(o.pending).toBe(0);
    expect(o.reset()).toBe(0);
    const s = sink();
    o.up(s);
    expect(o.send(interval(0))).toBe(1);
    const next = o.allAcked();
    o.ack(1);
    await expect(next).resolves.toBeUndefined();
  });

  it('a hand-over waiting on a reset outbox ends without the ack (the spool is kept), saying why', async () => {
    const o = new Outbox();
    o.up(sink());
    o.send(final);
    const heard: string[] = [];
    const handed = awaitFinalAck(o.allAcked(), new Promise(() => {}), (err) => heard.push(err.message));
    o.reset('run r2 began');
    await expect(handed).resolves.toBe(false);
    expect(heard).toEqual(['1 message(s) never acknowledged: run r2 began']);
  });
});
