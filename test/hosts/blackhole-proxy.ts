// A userspace TCP proxy between an agent and the coordinator that, at one chosen moment of the
// protocol, stops forwarding one direction of the link without closing it: the bytes are read and
// thrown away, the sockets stay open (a blackholed route or a half-open TCP link). It reads the
// WebSocket frames it forwards (unmasking the agent's), decodes each message, and triggers on:
//   rows:N   after forwarding the agent's `records` that bring its rows to N (its last batch)
//   final    at the agent's `final` (dropped when the up direction is cut, forwarded when down is)
//   release  at the coordinator's `release` (dropped when the down direction is cut)
//   chaos:SEED:COUNT:FROM_MS:TO_MS  COUNT faults at seeded random moments FROM_MS…TO_MS after the first
//            link, each on the link open then: closed at once, or blackholed up or down (the
//            direction argument is ignored); for a soak
// Only the first link that triggers is cut; later links (the agent reconnecting) pass untouched.
// Usage: node blackhole-proxy.js [LISTEN_HOST:]LISTEN_PORT UPSTREAM_HOST UPSTREAM_PORT up|down TRIGGER
// (LISTEN_HOST defaults to 127.0.0.1)
import { createConnection, createServer, type Socket } from 'node:net';
import type { Message } from '../../shared/protocol.js';
import { decodeMessage } from '../../shared/protocol.js';

const [listenPort, upstreamHost, upstreamPort, direction, trigger] = process.argv.slice(2);
let fired = false;
const chaos = trigger?.startsWith('chaos:') ? trigger.split(':').slice(1).map(Number) : null;
/** The link open now (chaos mode acts on it). */
let current: { cut: { up: boolean; down: boolean }; kill: () => void } | null = null;
let chaosArmed = false;

// mulberry32: a small seeded generator, so a soak's faults can be replayed.
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function armChaos(): void {
  if (!chaos || chaosArmed) return;
  chaosArmed = true;
  fired = true; // no trigger parsing in chaos mode
  const [seed, count, fromMs, toMs] = chaos as [number, number, number, number];
  const next = rng(seed);
  for (let i = 0; i < count; i++) {
    const at = Math.round(fromMs + next() * (toMs - fromMs));
    const kind = (['close', 'up', 'down'] as const)[Math.floor(next() * 3)]!;
    setTimeout(() => {
      if (!current) return;
      process.stdout.write(`chaos ${kind} at ${at} ms\n`);
      if (kind === 'close') current.kill();
      else current.cut[kind] = true;
    }, at);
  }
}

/** Splits a byte stream into WebSocket frames (after the HTTP upgrade) and decodes each payload. */
class FrameReader {
  private buf = Buffer.alloc(0);
  private upgraded = false;

  /** Feeds a chunk; returns the messages whose frames completed in it. */
  push(chunk: Buffer): Message[] {
    this.buf = Buffer.concat([this.buf, chunk]);
    if (!this.upgraded) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return [];
      this.buf = this.buf.subarray(end + 4);
      this.upgraded = true;
    }
    const out: Message[] = [];
    for (;;) {
      if (this.buf.length < 2) return out;
      const opcode = this.buf[0]! & 0x0f;
      const masked = (this.buf[1]! & 0x80) !== 0;
      let len = this.buf[1]! & 0x7f;
      let off = 2;
      if (len === 126) {
        if (this.buf.length < 4) return out;
        len = this.buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return out;
        len = Number(this.buf.readBigUInt64BE(2));
        off = 10;
      }
      const maskAt = off;
      if (masked) off += 4;
      if (this.buf.length < off + len) return out;
      const payload = Buffer.from(this.buf.subarray(off, off + len));
      if (masked) for (let i = 0; i < len; i++) payload[i]! ^= this.buf[maskAt + (i % 4)]!;
      this.buf = this.buf.subarray(off + len);
      if (opcode !== 2) continue; // pings, pongs, close: not protocol messages
      try {
        out.push(decodeMessage(payload));
      } catch {
        // not ours to judge
      }
    }
  }
}

createServer((client) => {
  client.setNoDelay(true);
  const upstream = createConnection({ host: upstreamHost!, port: Number(upstreamPort) });
  upstream.setNoDelay(true);
  const cut = { up: false, down: false };
  current = {
    cut,
    kill: () => {
      client.destroy();
      upstream.destroy();
    },
  };
  armChaos();
  let rows = 0;
  const up = new FrameReader();
  const down = new FrameReader();
  const fire = (): void => {
    fired = true;
    cut[direction as 'up' | 'down'] = true;
    process.stdout.write(`blackholed ${direction} at ${trigger}\n`);
  };
  // Decides, for one chunk, whether it is forwarded; fires the trigger where it falls.
  const pipe = (from: Socket, to: Socket, dir: 'up' | 'down', reader: FrameReader): void => {
    from.on('data', (chunk: Buffer) => {
      if (cut[dir]) return;
      const messages = fired ? [] : reader.push(chunk);
      for (const m of messages) {
        if (fired) break;
        if (dir === 'up' && m.type === 'records') rows += m.rows.length;
        if (dir === 'up' && m.type === 'final' && trigger === 'final') fire();
        if (dir === 'down' && m.type === 'release' && trigger === 'release') fire();
      }
      if (!cut[dir]) to.write(chunk);
      // `rows:N` cuts after the chunk that carried the last rows went through.
      if (!fired && trigger?.startsWith('rows:') && rows >= Number(trigger.slice(5))) fire();
    });
    from.on('end', () => !cut[dir] && to.end());
    from.on('error', () => to.destroy());
  };
  pipe(client, upstream, 'up', up);
  pipe(upstream, client, 'down', down);
  // A cut link tells neither end anything: each has to notice the silence by itself.
  upstream.on('close', () => !cut.up && !cut.down && client.destroy());
  client.on('close', () => !cut.up && !cut.down && upstream.destroy());
}).listen(Number(listenPort!.split(':').at(-1)), listenPort!.includes(':') ? listenPort!.split(':')[0] : '127.0.0.1', () =>
  process.stdout.write('proxy listening\n'),
);
