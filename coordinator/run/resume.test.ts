import { describe, expect, it } from 'vitest';
import { anchoredClock } from '../../shared/clock.js';
import type { AgentMessage, CoordinatorMessage } from '../../shared/protocol.js';
import { decodeCoordinatorMessage, PROTOCOL_VERSION } from '../../shared/protocol.js';
import { AgentChannel } from '../channel.js';
import type { Hello } from '../server.js';
import { AgentConn } from '../server.js';
import { RunState } from './context.js';
import type { RunOnFleetOptions } from './options.js';
import { resume } from './resume.js';

const hello = (extra: Partial<Hello> = {}): Hello => ({
  type: 'hello',
  protocol: PROTOCOL_VERSION,
  agent_id: 'a1',
  host: 'h',
  pid: 1,
  clock_domain_id: 'd',
  clock_domain_declared: false,
  epoch: 'e1',
  ...extra,
});

function link(h: Hello): { conn: AgentConn; sent: CoordinatorMessage[]; closed: [number, string][] } {
  const sent: CoordinatorMessage[] = [];
  const closed: [number, string][] = [];
  const ws = {
    readyState: 1,
    send: (b: Buffer) => void sent.push(decodeCoordinatorMessage(b)),
    close: (code: number, why: string) => void closed.push([code, why]),
    terminate() {},
  };
  return { conn: new AgentConn(h, '127.0.0.1:1', ws as never), sent, closed };
}

const plan = {
  schema: 'loadfleet.plan/v1',
  name: 'r',
  seed: 1,
  duration_s: 1,
  classes: [
    {
      name: 'c',
      prompt: { input_tokens: 4, output_tokens: 4 },
      load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 1, rate_per_s: 1 }] },
    },
  ],
} as never;

// A run whose one agent's `final` (rseq 1) is merged, then closed and disposed, as at its end.
function closedRun(): { run: RunState; logs: string[] } {
  const logs: string[] = [];
  const opts = { log: (l: string) => void logs.push(l), agentGraceMs: 10_000 } as unknown as RunOnFleetOptions;
  const { conn } = link(hello());
  const run = new RunState(opts, plan, 'run-1', '/nonexistent', anchoredClock(), [conn], 0, null as never);
  const ch = new AgentChannel(conn, 0, { linkClosed: () => {} });
  for (const e of ['probe', 'probed', 'plan', 'prepared', 'arm', 'armed'] as const) ch.step(e);
  const final = { type: 'final', windows: {}, health: null, records: 0, rseq: 1 } as unknown as AgentMessage;
  conn.deliver(final);
  expect(ch.final).toBe(true);
  run.channels.push(ch);
  run.states.push(ch);
  run.collector = {} as never;
  run.moveRun('closing');
  run.moveRun('closed');
  ch.dispose();
  return { run, logs };
}

describe('a resume across the run boundary', () => {
  it('the same process, back after the run closed for the ack of a final already merged: told the mark, not refused', () => {
    const { run, logs } = closedRun();
    const back = link(hello({ resume_run_id: 'run-1', resume_live: true }));
    expect(resume(run, back.conn)).toBe(true);
    expect(back.sent).toEqual([{ type: 'resume', run_id: 'run-1', acked: 1 }]);
    expect(back.closed).toEqual([]);
    expect(logs.at(-1)).toContain('already merged');
  });

  it('another process under the id, or a run not merged, is still refused once the run is closed', () => {
    const { run } = closedRun();
    const other = link(hello({ resume_run_id: 'run-1', resume_live: true, epoch: 'e2' }));
    expect(resume(run, other.conn)).toBe(false);
    expect(other.closed[0]![0]).toBe(4404);
    const unknown = link(hello({ resume_run_id: 'run-0', resume_live: true }));
    expect(resume(run, unknown.conn)).toBe(false);
    expect(unknown.closed[0]).toEqual([4404, 'run run-0 is not in progress here']);
  });

  it("a run whose journal failed refuses a spool offered to it as 'finishing' (4503): the agent offers it again to the coordinator that recovers the run", () => {
    const { run } = closedRun();
    (run as { phase: string }).phase = 'open';
    run.fault = new Error('ENOSPC');
    const offer = link(hello({ resume_run_id: 'run-1', epoch: 'e2' }));
    expect(resume(run, offer.conn)).toBe(false);
    expect(offer.closed[0]![0]).toBe(4503);
  });
});
