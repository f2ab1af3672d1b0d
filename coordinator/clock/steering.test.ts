// The steering's I/O against agents that answer probes in-process (a clock 500 ppm fast, a
// symmetric round trip): who is probed before the start and for how long, the offset each
// starts on, and that held-out probes measure a residual without steering.
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../shared/clock.js';
import { hostClockDomain } from '../../shared/clock.js';
import type { AgentMessage, CoordinatorMessage } from '../../shared/protocol.js';
import type { AgentState } from '../agent-state.js';
import { AgentChannel } from '../channel.js';
import type { AgentConn } from '../server.js';
import { HELD_OUT_BURST, HOLD_OUT_EVERY } from './held-out.js';
import type { ClockDecision } from './policy.js';
import { PRE_START_PROBES } from './pre-start.js';
import { ClockSteering } from './steering.js';

const PPM = 500;
const AHEAD = 3e6;
const clock: Clock = {
  nowNs: () => process.hrtime.bigint(),
  anchorUncertaintyNs: 0,
  anchor: { wallNs: 0n, hr: 0n, uncertaintyNs: 0 },
};
const T0 = clock.nowNs();

/** An agent whose clock runs PPM fast and AHEAD ahead, answering each probe on the next timer. */
function fakeAgent(index: number, domain: string, correction: () => number | undefined = () => undefined) {
  const handlers = new Set<(m: AgentMessage) => void>();
  const sent: CoordinatorMessage[] = [];
  const conn = {
    index,
    closed: false,
    hello: { agent_id: `a${index}`, clock_domain_id: domain },
    onMessage: (fn: (m: AgentMessage) => void) => {
      handlers.add(fn);
      return () => handlers.delete(fn);
    },
    onClose: () => () => {},
    send: (m: CoordinatorMessage) => {
      sent.push(m);
      if (m.type !== 'probe') return;
      setTimeout(() => {
        // Read at the round trip's midpoint: symmetric legs, however late this timer fires.
        const at = m.t1_ns + (clock.nowNs() - m.t1_ns) / 2n;
        const t2 = at + BigInt(Math.round(AHEAD + Number(at - T0) * PPM * 1e-6));
        const c = correction();
        const reply = {
          type: 'probe_reply' as const,
          seq: m.seq,
          t1_ns: m.t1_ns,
          t2_ns: t2,
          t3_ns: t2,
          ...(c !== undefined && { clock_correction_ns: c }),
        };
        for (const h of [...handlers]) h(reply);
      }, 0);
    },
  };
  return { conn: conn as unknown as AgentConn, sent };
}

/** The run probes an agent through its channel. */
const channelOf = (conn: AgentConn, index: number): AgentChannel => new AgentChannel(conn, index, { linkClosed: () => {} });

const measured: ClockDecision = { alignment: 'measured-offsets', domainId: 'coordinator:x', domainOffsetNs: 0, refusal: null, note: null };

describe('ClockSteering', () => {
  it('probes only the steered agents before the start, until they are prepared and their drift is known', async () => {
    const steering = new ClockSteering(
      clock,
      measured,
      () => 0n,
      () => 0,
    );
    const fast = fakeAgent(0, 'lab:fast');
    const local = fakeAgent(1, hostClockDomain());
    let prepared = (): void => {};
    const preparing = new Promise<void>((r) => {
      prepared = r;
    });
    const probing = steering.probeBeforeStart([channelOf(fast.conn, 0), channelOf(local.conn, 1)], preparing);
    await new Promise((r) => setTimeout(r, 300));
    prepared();
    const probes = await probing;
    expect(probes[1]).toHaveLength(0);
    expect(local.sent).toHaveLength(0);
    expect(probes[0]!.length).toBeGreaterThanOrEqual(PRE_START_PROBES);
    // The offset it starts on: its line at the start instant (here 2 s ahead), not the join's.
    const startNs = clock.nowNs() + 2_000_000_000n;
    const state = { index: 0, conn: fast.conn, offset: { offset_ns: AHEAD }, runProbes: probes[0]! } as unknown as AgentState;
    steering.placeStart([state], startNs);
    const truth = AHEAD + Number(startNs - T0) * PPM * 1e-6;
    expect(Math.abs(state.startOffsetNs! - truth)).toBeLessThan(0.2e6);
  });

  it('gives up at once when the preparation fails, and waits for nothing without steered agents', async () => {
    const steering = new ClockSteering(
      clock,
      measured,
      () => 0n,
      () => 0,
    );
    const fast = fakeAgent(0, 'lab:fast');
    const failed = steering.probeBeforeStart([channelOf(fast.conn, 0)], Promise.reject(new Error('no')));
    expect((await failed)[0]!.length).toBeLessThanOrEqual(1);
    const local = fakeAgent(0, hostClockDomain());
    const none = await steering.probeBeforeStart([channelOf(local.conn, 0)], new Promise(() => {}));
    expect(none).toEqual([[]]);
  });

  it('holds every fourth in-run probe out of the fit: a burst that measures the run timeline and steers nothing', async () => {
    const startNs = clock.nowNs();
    const steering = new ClockSteering(
      clock,
      measured,
      () => startNs,
      () => 0,
    );
    // The agent has applied exactly what its clock gained since the start: its run timeline is ours.
    const startOffset = AHEAD + Number(startNs - T0) * PPM * 1e-6;
    const agent = fakeAgent(0, 'lab:fast', () => Number(clock.nowNs() - startNs) * PPM * 1e-6);
    const state = {
      index: 0,
      conn: agent.conn,
      channel: channelOf(agent.conn, 0),
      offset: { offset_ns: AHEAD },
      startOffsetNs: startOffset,
      firstSendErrorNs: 0,
      runProbes: [],
      slewSteps: [],
      domainSteps: [],
      offsetLine: null,
      clockCorrectionNs: null,
    } as unknown as AgentState;
    let seq = 0;
    for (let k = 0; k < 2 * HOLD_OUT_EVERY; k++) await steering.probe(state, () => seq++, [state]);
    expect(state.heldOut).toHaveLength(2);
    expect(state.runProbes).toHaveLength(2 * (HOLD_OUT_EVERY - 1));
    expect(seq).toBe(2 * (HOLD_OUT_EVERY - 1) + 2 * HELD_OUT_BURST);
    for (const r of state.heldOut!) expect(Math.abs(r.residual_ns)).toBeLessThanOrEqual(r.bound_ns + 0.05e6);
    // Six fit probes are too few to steer (eight are needed): only the held-out ones measured.
    expect(agent.sent.filter((m) => m.type === 'slew')).toHaveLength(0);
  });
});
