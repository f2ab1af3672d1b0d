// suite: timing
// Links that die silently at the worst moments of a run's end, end to end: a proxy between the
// agent and the coordinator stops forwarding one direction without closing anything (test/hosts/
// blackhole-proxy.ts) — right after the agent's last records (their ack lost), at its `final`
// (the frame lost, or its ack lost), at the coordinator's `release`. Both ends notice by heartbeat
// timeout, the agent reconnects and completes its hand-over: every request once, the run complete,
// the agent released with exit 0 and its spool deleted only once `final` was acknowledged.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SILENCE_DETECTION_BOUND_MS } from '../shared/delivery.js';
import { constantRatePlan, freePort, readRequests, readRunJson, startNode, tempDir, waitFor, writePlan } from './harness.js';

const TOKEN = { LOADFLEET_TOKEN: 'silent-links-token' };
const REQUESTS = 24;

async function cutRun(direction: 'up' | 'down', trigger: string) {
  const dir = tempDir();
  const plan = writePlan(dir, constantRatePlan(`silent-${direction}`, 3, REQUESTS / 3));
  const coord = startNode(
    'coordinator/main.js',
    ['start', '--agents', '1', '--plan', plan, '--out', join(dir, 'out'), '--listen', '127.0.0.1:0', '--sim-arg=--ttft-ms=20'],
    TOKEN,
  );
  const [, url] = await waitFor(coord.child.stderr!, /waiting for \d+ agent\(s\) at (ws:\/\/[\d.:]+)/);
  const upstream = new URL(url!);
  const port = await freePort();
  const proxy = startNode('test/hosts/blackhole-proxy.js', [String(port), upstream.hostname, upstream.port, direction, trigger]);
  await waitFor(proxy.child.stdout!, /proxy listening/);
  const spool = join(dir, 'spool');
  const agent = startNode('agent/main.js', ['--coordinator', `ws://127.0.0.1:${port}`, '--id', 'edge', '--spool-dir', spool], TOKEN);
  // When the link was cut, and when each end dropped it (the first time each said so).
  const at = { cut: 0, agent: 0, coordinator: 0 };
  const mark = (stream: NodeJS.ReadableStream, pattern: RegExp, key: keyof typeof at): void => {
    stream.on('data', (c: Buffer) => {
      // Only what happens after the cut counts (a mid-run reconnect of a contended run does not).
      if (at[key] === 0 && (key === 'cut' || at.cut > 0) && pattern.test(c.toString())) at[key] = Date.now();
    });
  };
  mark(proxy.child.stdout!, /blackholed/, 'cut');
  mark(agent.child.stderr!, /coordinator silent for 5 s|link to the coordinator lost/, 'agent');
  mark(coord.child.stderr!, /link to edge silent for 5 s/, 'coordinator');
  const [res, a] = await Promise.all([coord.done, agent.done]);
  proxy.child.kill('SIGKILL');
  const p = await proxy.done;
  const detection = { agentMs: at.agent - at.cut, coordinatorMs: at.coordinator - at.cut };
  console.log(
    `silent link ${direction} at ${trigger}: noticed by the agent after ${detection.agentMs} ms, by the coordinator after ${detection.coordinatorMs} ms`,
  );
  return { res, a, proxyOut: p.stdout, dir, spool, detection };
}

function expectComplete(r: Awaited<ReturnType<typeof cutRun>>, trigger: string): void {
  const { res, a, proxyOut, dir, spool } = r;
  expect(proxyOut, 'the proxy cut the link').toMatch(new RegExp(`blackholed (up|down) at ${trigger}`));
  expect(res.code, res.stderr).toBe(0);
  expect(a.code, a.stderr).toBe(0);
  const [runId] = readdirSync(join(dir, 'out'));
  const runDir = join(dir, 'out', runId!);
  const rows = readRequests(runDir);
  expect(rows).toHaveLength(REQUESTS);
  expect(new Set(rows.map((x) => x.request_index)).size).toBe(REQUESTS);
  const run = readRunJson(runDir);
  expect(run.requests).toBe(REQUESTS);
  expect(run.agents[0].status).toBe('ok');
  expect(['completed', 'degraded']).toContain(run.status);
  // Handed over: nothing left in the spool directory, nothing set aside.
  expect(readdirSync(spool).filter((n) => n.includes('.spool.'))).toEqual([]);
  // The agent was off the dead link within the stated bound (plus one check period of slack for a
  // contended machine's timers and the log line's travel): dropped by its own heartbeat, or closed
  // by the coordinator's when the coordinator noticed first.
  expect(r.detection.agentMs).toBeGreaterThan(0);
  expect(r.detection.agentMs).toBeLessThan(SILENCE_DETECTION_BOUND_MS + 1000);
}

describe('a link that dies silently at the end of a run', () => {
  it.concurrent('after the last records (their ack lost): the agent resumes, is told the mark, sends final', async () => {
    const r = await cutRun('down', `rows:${REQUESTS}`);
    expectComplete(r, `rows:${REQUESTS}`);
    expect(r.a.stderr).toMatch(/resumed run/);
  });

  it.concurrent('during final (the frame lost): final is resent and merged once', async () => {
    const r = await cutRun('up', 'final');
    expectComplete(r, 'final');
    expect(r.a.stderr).toMatch(/resumed run .*: resent [1-9]\d* unacknowledged/);
  });

  it.concurrent('after final (its ack lost): the run completes; the agent comes back for the ack', async () => {
    const r = await cutRun('down', 'final');
    expectComplete(r, 'final');
    expect(r.a.stderr).toMatch(/run .* handed over/);
  });

  it.concurrent('during release (the release lost): the agent comes back with its secret and is released', async () => {
    const r = await cutRun('down', 'release');
    expectComplete(r, 'release');
    expect(r.a.stderr).toMatch(/released by the coordinator/);
  });
});
