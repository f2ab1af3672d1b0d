import { describe, expect, it } from 'vitest';
import { anchoredClock } from '../shared/clock.js';
import { ErrorCode } from '../shared/errors.js';
import type { AgentMessage, CoordinatorMessage } from '../shared/protocol.js';
import { decodeCoordinatorMessage, PROTOCOL_VERSION } from '../shared/protocol.js';
import type { ChannelHooks } from './channel.js';
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

// One fleet link: what the coordinator sends on it is decoded back, as the agent would see it;
// `answer` plays the agent (its replies are delivered on the next turn, as frames would be).
function link(answer: (m: CoordinatorMessage) => AgentMessage | null = () => null): { conn: AgentConn; sent: CoordinatorMessage[] } {
  const sent: CoordinatorMessage[] = [];
  const ws = {
    readyState: 1,
    send: (b: Buffer) => {
      const m = decodeCoordinatorMessage(b);
      sent.push(m);
      const reply = answer(m);
      if (reply) setImmediate(() => conn.deliver(reply));
    },
    close() {},
    terminate() {},
  };
  const conn = new AgentConn(hello, '127.0.0.1:1', ws as never);
  return { conn, sent };
}

// The agent's side of a clean run: answers probes, plan and arm.
function agent(m: CoordinatorMessage): AgentMessage | null {
  if (m.type === 'probe') return { type: 'probe_reply', seq: m.seq, t1_ns: m.t1_ns, t2_ns: m.t1_ns + 5n, t3_ns: m.t1_ns + 6n };
  if (m.type === 'plan') return { type: 'prepared', prep_ms: 12, planned_requests: 3 };
  if (m.type === 'arm') return { type: 'armed', start_local_ns: m.start_local_ns };
  return null;
}

const clock = anchoredClock();
const hooks = (extra: Partial<ChannelHooks> = {}): ChannelHooks => ({ linkClosed: () => {}, ...extra });
const records = (rseq: number): AgentMessage => ({ type: 'records', seq: rseq - 1, rows: [], rseq });
const plan = { type: 'plan', run_id: 'r', plan: {} as never, share: { index: 0, count: 1 } } as const;

describe('AgentChannel', () => {
  it('a fleet link serving three runs in a row: one ack per sequence number, no earlier run left listening', () => {
    const { conn, sent } = link();
    conn.onClose(() => {}); // the fleet's own subscription, which outlives runs
    const baseline = conn.listenerCount();
    const taken: string[][] = [];
    for (let run = 0; run < 3; run++) {
      const got: string[] = [];
      taken.push(got);
      const ch = new AgentChannel(conn, 0, hooks());
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
    const ch = new AgentChannel(conn, 0, hooks());
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

  it('a whole run from messages alone: joined → probing → probed → preparing → prepared → arming → armed → live → draining → final', async () => {
    const { conn, sent } = link(agent);
    const ch = new AgentChannel(conn, 0, hooks());
    const phases: string[] = [ch.phase];
    const offset = await ch.probeAtJoin(clock, 4);
    phases.push(ch.phase);
    expect(offset.probes).toBe(4);
    expect(sent.filter((m) => m.type === 'probe').map((m) => (m.type === 'probe' ? m.seq : -1))).toEqual([0, 1, 2, 3]);
    expect(await ch.prepare(plan, 1000)).toBe(12);
    phases.push(ch.phase);
    expect(await ch.arm(123n, 1000)).toBe(true);
    phases.push(ch.phase);
    conn.deliver({ type: 'started', first_send_error_ns: 1, rseq: 1 });
    phases.push(ch.phase);
    ch.stop('enough');
    phases.push(ch.phase);
    expect(sent.at(-1)).toEqual({ type: 'stop', reason: 'enough' });
    conn.deliver({ type: 'final', windows: {} as never, health: {} as never, records: 0, rseq: 2 });
    phases.push(ch.phase);
    expect(phases).toEqual(['joined', 'probed', 'prepared', 'armed', 'live', 'draining', 'final']);
    // Late messages leave a terminal phase as it is.
    conn.deliver({ type: 'started', first_send_error_ns: 1, rseq: 3 });
    expect(ch.phase).toBe('final');
  });

  it('a link cut mid-run: reconnecting, then back where it was on the new link (draining when a stop came meanwhile)', () => {
    const { conn } = link();
    const ch = new AgentChannel(conn, 0, hooks());
    for (const e of ['probe', 'probed', 'plan', 'prepared', 'arm', 'armed', 'started'] as const) ch.step(e);
    expect(ch.phase).toBe('live');
    ch.step('link-down');
    expect(ch.reconnecting).toBe(true);
    ch.step('rejoin');
    expect(ch.phase).toBe('live');
    ch.step('link-down');
    const { conn: next, sent } = link();
    ch.attach(next);
    ch.step('rejoin');
    ch.stop('stopped while it was away');
    expect(ch.phase).toBe('draining');
    expect(sent).toEqual([{ type: 'stop', reason: 'stopped while it was away' }]);
    ch.step('lose');
    expect(ch.lost).toBe(true);
    // A lost channel takes a restarted process's upload without moving.
    ch.attach(link().conn, true);
    const got: string[] = [];
    ch.onMessage((m) => got.push(m.type));
    ch.conn.deliver(records(1));
    ch.conn.deliver({ type: 'final', windows: {} as never, health: {} as never, records: 0, rseq: 2 });
    expect(got).toEqual(['records', 'final']);
    expect(ch.phase).toBe('lost');
  });

  it('a message its phase has no move for is dropped and said, with LF_PHASE_MOVE; an illegal step throws it', () => {
    const { conn } = link();
    const said: string[] = [];
    const ch = new AgentChannel(conn, 0, hooks({ illegal: (_, err) => said.push(`${err.code} ${err.message}`) }));
    const got: string[] = [];
    ch.onMessage((m) => got.push(m.type));
    conn.deliver({ type: 'prepared', prep_ms: 1, planned_requests: 1 });
    conn.deliver({ type: 'armed', start_local_ns: 1n });
    expect(got).toEqual([]);
    expect(said).toEqual([
      `${ErrorCode.PHASE_MOVE} agent a1: no move for prepared in phase joined`,
      `${ErrorCode.PHASE_MOVE} agent a1: no move for armed in phase joined`,
    ]);
    expect(ch.phase).toBe('joined');
    expect(() => ch.step('started')).toThrow(expect.objectContaining({ code: ErrorCode.PHASE_MOVE }));
  });

  it('a failure before the start: the agent says so, its link closes, or it stays silent — failed, with the detail, and no wait left on the link', async () => {
    // It says so.
    const says = link((m) => (m.type === 'plan' ? { type: 'failed', code: 'LF_AGENT_FAILED', message: 'no spool', rseq: 1 } : agent(m)));
    const a = new AgentChannel(says.conn, 0, hooks());
    await a.probeAtJoin(clock, 1);
    await expect(a.prepare(plan, 1000)).rejects.toMatchObject({ code: ErrorCode.AGENT_FAILED });
    expect([a.phase, a.failure]).toEqual(['failed', 'LF_AGENT_FAILED: no spool']);
    // Its link closes while it prepares.
    const closes = link((m) => (m.type === 'plan' ? null : agent(m)));
    const closed: string[] = [];
    const b = new AgentChannel(closes.conn, 0, hooks({ linkClosed: (ch) => closed.push(ch.phase) }));
    await b.probeAtJoin(clock, 1);
    const preparing = b.prepare(plan, 1000);
    closes.conn.closedNow(1006);
    await expect(preparing).rejects.toThrow('agent a1 closed its link while preparing');
    expect([b.phase, b.failure, closed]).toEqual(['failed', 'closed its link while preparing', ['failed']]);
    // It stays silent past the deadline: the wait ends with it, so nothing of this run is left on
    // the fleet's link for the next one.
    const silent = link((m) => (m.type === 'plan' ? null : agent(m)));
    const baseline = silent.conn.listenerCount();
    const c = new AgentChannel(silent.conn, 0, hooks());
    await c.probeAtJoin(clock, 1);
    await expect(c.prepare(plan, 20)).rejects.toMatchObject({ code: ErrorCode.ARM_TIMEOUT });
    expect([c.phase, c.failure]).toEqual(['failed', 'did not prepare within 0.02 s']);
    c.dispose();
    expect(silent.conn.listenerCount()).toBe(baseline);
  });

  it('an agent that does not arm by the deadline: arm resolves false and its wait is gone; disposing ends a pending probe', async () => {
    const { conn } = link((m) => (m.type === 'arm' ? null : agent(m)));
    const ch = new AgentChannel(conn, 0, hooks());
    await ch.probeAtJoin(clock, 1);
    await ch.prepare(plan, 1000);
    expect(await ch.arm(5n, 10)).toBe(false);
    expect(ch.phase).toBe('arming');
    const probe = ch.probe(clock, 99); // the agent above answers, but only on the next turn
    ch.dispose();
    await expect(probe).rejects.toThrow('the run is over');
  });

  it('with a journal: a message is taken at once but acknowledged only once durable, in groups, never past a failed flush', async () => {
    const { conn, sent } = link();
    const flushes: { resolve(): void; reject(e: Error): void }[] = [];
    const ch = new AgentChannel(
      conn,
      0,
      hooks({
        durable: () =>
          new Promise<void>((resolve, reject) => {
            flushes.push({ resolve, reject });
          }),
      }),
    );
    const got: number[] = [];
    ch.onMessage((m) => 'rseq' in m && got.push(m.rseq!));
    const raw = new Uint8Array([0]);
    for (const r of [1, 2, 3]) conn.deliver(records(r), raw);
    expect(got).toEqual([1, 2, 3]);
    expect(sent).toEqual([]); // nothing is on disk yet
    expect(ch.hwm).toBe(0);
    expect(ch.taken).toBe(3);
    // A resend of one not yet durable is a duplicate, acknowledged only as far as the disk goes.
    conn.deliver(records(2), raw);
    expect(sent).toEqual([{ type: 'ack', seq: 0 }]);
    flushes[0]!.resolve();
    flushes[1]!.resolve();
    await new Promise((r) => setImmediate(r));
    expect(sent.at(-1)).toEqual({ type: 'ack', seq: 2 });
    expect(ch.hwm).toBe(2);
    flushes[2]!.reject(new Error('ENOSPC'));
    await new Promise((r) => setImmediate(r));
    expect(sent.at(-1)).toEqual({ type: 'ack', seq: 2 });
    expect(ch.hwm).toBe(2);
  });

  it('once the run takes no more, a new message is refused (the link closed with the reason, 4404), a duplicate still acknowledged', () => {
    const closes: [number, string][] = [];
    const { conn, sent } = link();
    (conn as unknown as { ws: { close(code: number, why: string): void } }).ws.close = (code, why) => void closes.push([code, why]);
    let refusal: string | null = null;
    const refused: string[] = [];
    const ch = new AgentChannel(conn, 0, hooks({ refusal: () => refusal, refused: (_c, why) => void refused.push(why) }));
    const got: number[] = [];
    ch.onMessage((m) => 'rseq' in m && got.push(m.rseq!));
    conn.deliver(records(1));
    refusal = 'run r is closed';
    conn.deliver(records(1));
    conn.deliver(records(2));
    expect(got).toEqual([1]);
    expect(sent).toEqual([
      { type: 'ack', seq: 1 },
      { type: 'ack', seq: 1 },
    ]);
    expect(closes).toEqual([[4404, 'run r is closed']]);
    expect(refused).toEqual(['run r is closed']);
    expect(ch.refusedMessages).toBe(1);
  });
});
