// Who may take an agent id's place in a fleet: a real fleet on loopback, raw WebSocket clients
// speaking the protocol. The process that joined proves itself with the secret it was given; any
// other process under a connected id is refused with a clear error, and a slot whose link closed
// is held for its agent for the grace.
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { AgentMessage, CoordinatorMessage } from '../shared/protocol.js';
import { AGENT_PATH, decodeCoordinatorMessage, encodeMessage, PROTOCOL_HEADER, PROTOCOL_VERSION } from '../shared/protocol.js';
import { Fleet } from './fleet.js';

const TOKEN = 'identity-token';
const GRACE_MS = 1500;
let fleet: Fleet | undefined;

afterEach(async () => {
  await fleet?.release('test over');
  fleet = undefined;
});

async function openFleet(): Promise<string> {
  const lines: string[] = [];
  fleet = await Fleet.open({
    agents: 1,
    listenHost: '127.0.0.1',
    listenPort: 0,
    token: TOKEN,
    spawnLocal: false,
    joinTimeoutMs: 10_000,
    agentArgs: [],
    maxAgentLoss: 0,
    agentGraceMs: GRACE_MS,
    log: (l) => lines.push(l),
  });
  const url = lines.map((l) => /at (ws:\/\/\S+)/.exec(l)?.[1]).find(Boolean);
  return url!;
}

interface Client {
  ws: WebSocket;
  /** Resolves with the first message, or with the close code and reason if the link is closed first. */
  first: Promise<CoordinatorMessage | { closed: number; reason: string }>;
}

function client(url: string, id: string, extra: Partial<Extract<AgentMessage, { type: 'hello' }>> = {}): Client {
  const ws = new WebSocket(`${url}${AGENT_PATH}`, {
    headers: { authorization: `Bearer ${TOKEN}`, [PROTOCOL_HEADER]: String(PROTOCOL_VERSION) },
  });
  const first = new Promise<CoordinatorMessage | { closed: number; reason: string }>((resolve) => {
    ws.once('message', (d: Buffer) => resolve(decodeCoordinatorMessage(d)));
    ws.once('close', (code, reason) => resolve({ closed: code, reason: reason.toString() }));
  });
  ws.on('open', () =>
    ws.send(
      encodeMessage({
        type: 'hello',
        protocol: PROTOCOL_VERSION,
        agent_id: id,
        host: 'h',
        pid: 1,
        clock_domain_id: 'd',
        clock_domain_declared: false,
        epoch: `epoch-${id}`,
        ...extra,
      }),
    ),
  );
  return { ws, first };
}

async function secretOf(c: Client): Promise<string> {
  const m = await c.first;
  if (!('type' in m) || m.type !== 'joined') throw new Error(`expected joined, got ${JSON.stringify(m)}`);
  return m.secret;
}

/**
 * Leaves as a released agent does, with a closing handshake: the fleet's release then has no link
 * to wait for (a dropped one is waited for 9 s: the heartbeat bound and the time to rejoin, in case
 * its agent comes back).
 */
async function closeCleanly(c: Client): Promise<void> {
  const closed = new Promise<void>((r) => c.ws.once('close', () => r()));
  c.ws.close(1000);
  await closed;
}

describe('fleet identity', () => {
  it('refuses another process under a connected id (join or resume) and takes the one with the secret back', async () => {
    const url = await openFleet();
    const a = client(url, 'a1');
    const secret = await secretOf(a);
    expect(secret).toMatch(/^[0-9a-f]{32}$/);
    const twin = await client(url, 'a1').first;
    expect(twin).toEqual({ closed: 4009, reason: 'LF_DUPLICATE_AGENT: agent id a1 is already connected' });
    const impostor = await client(url, 'a1', { resume_run_id: 'r1', resume_live: true, secret: 'not-it' }).first;
    expect(impostor).toMatchObject({ closed: 4009, reason: expect.stringMatching(/not the one that joined \(wrong secret\)/) });
    // The process that joined, on a new link (its old one not yet seen to fail): it takes its slot back.
    const oldClosed = new Promise<number>((r) => a.ws.once('close', (code) => r(code)));
    const back = client(url, 'a1', { secret });
    const newSecret = await secretOf(back);
    expect(newSecret).not.toBe(secret);
    expect(await oldClosed).toBe(1006); // the stale link is dropped
    await closeCleanly(back);
  });

  it('holds a reconnecting agent slot for the grace: a new id is refused within it, admitted after it', async () => {
    const url = await openFleet();
    const a = client(url, 'a1');
    await secretOf(a);
    const other = await client(url, 'b1').first;
    expect(other).toMatchObject({ closed: 4009, reason: expect.stringMatching(/already has its 1 agents/) });
    a.ws.terminate();
    await new Promise((r) => setTimeout(r, 200));
    const within = await client(url, 'b1').first;
    expect(within).toMatchObject({ closed: 4009, reason: expect.stringMatching(/holds their slots while they reconnect/) });
    await new Promise((r) => setTimeout(r, GRACE_MS + 200));
    const after = client(url, 'b1');
    await secretOf(after);
    await closeCleanly(after);
  });
});
