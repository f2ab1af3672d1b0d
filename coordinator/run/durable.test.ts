import { describe, expect, it } from 'vitest';
import { anchoredClock } from '../../shared/clock.js';
import { PROTOCOL_VERSION } from '../../shared/protocol.js';
import { AgentChannel } from '../channel.js';
import type { Hello } from '../server.js';
import { AgentConn } from '../server.js';
import { RunState } from './context.js';
import { isUploading, waitForUploads } from './durable.js';
import type { RunOnFleetOptions } from './options.js';

const hello = (epoch: string): Hello => ({
  type: 'hello',
  protocol: PROTOCOL_VERSION,
  agent_id: 'a1',
  host: 'h',
  pid: 1,
  clock_domain_id: 'd',
  clock_domain_declared: false,
  epoch,
});
const conn = (epoch: string): AgentConn =>
  new AgentConn(hello(epoch), '127.0.0.1:1', { readyState: 1, send() {}, close() {}, terminate() {} } as never);

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

// A run whose one agent was lost, and whose restarted process is uploading its spool.
function uploading(): { run: RunState; ch: AgentChannel; logs: string[] } {
  const logs: string[] = [];
  const first = conn('e1');
  const run = new RunState(
    { log: (l: string) => void logs.push(l) } as unknown as RunOnFleetOptions,
    plan,
    'r',
    '/x',
    anchoredClock(),
    [first],
    0,
    null as never,
  );
  const ch = new AgentChannel(first, 0, { linkClosed: () => {} });
  for (const e of ['probe', 'probed', 'plan', 'prepared', 'arm', 'armed', 'lose'] as const) ch.step(e);
  const restarted = conn('e2');
  ch.attach(restarted, true);
  ch.uploadConn = restarted;
  run.states.push(ch);
  return { run, ch, logs };
}

describe('a spool upload under way when the run would close', () => {
  it('is waited for until it hands over (then the run goes on at once, nothing said)', async () => {
    const { run, ch, logs } = uploading();
    expect(isUploading(ch)).toBe(true);
    setTimeout(() => {
      ch.spoolHandedOver = true;
      run.wake();
    }, 300);
    const t0 = Date.now();
    await waitForUploads(run, 10_000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(logs[0]).toMatch(/waiting up to 10(\.0)? s for spool uploads under way \(a1\)/);
    expect(run.runEvents).toEqual([]);
  });

  it('is waited for no longer than the stated bound; the run says the rest was refused and the agent keeps its spool', async () => {
    const { run } = uploading();
    const t0 = Date.now();
    await waitForUploads(run, 500);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(450);
    expect(run.runEvents).toEqual([
      "agent a1's spool upload was still under way when the run closed (0 requests taken): the rest was refused, and the agent keeps its spool",
    ]);
  });

  it('an upload not heard from for 5 s is not waited for', async () => {
    const { run, ch } = uploading();
    ch.lastHeardMs = Date.now() - 6000;
    const t0 = Date.now();
    await waitForUploads(run, 10_000);
    expect(Date.now() - t0).toBeLessThan(100);
  });
});
