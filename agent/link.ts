// The agent's WebSocket link to the coordinator: connect with backoff until it is up, refuse to
// retry when retrying cannot help (wrong token, other protocol, a TLS mismatch), frame every message.
import { connect as tlsConnect } from 'node:tls';
import WebSocket from 'ws';
import { LINK_SILENCE_MS } from '../shared/delivery.js';
import { ErrorCode, ExitCode, LoadfleetError } from '../shared/errors.js';
import { heartbeat } from '../shared/heartbeat.js';
import type { AgentMessage, CoordinatorMessage } from '../shared/protocol.js';
import { AGENT_PATH, decodeCoordinatorMessage, encodeMessage, PROTOCOL_HEADER, PROTOCOL_VERSION } from '../shared/protocol.js';

/** How long a closing handshake is waited for before the agent goes anyway. */
const CLOSE_WAIT_MS = 1000;

/** An open link. */
export interface Link {
  send(m: AgentMessage): void;
  /** Bytes queued in the socket but not yet written (for backpressure). */
  bufferedBytes(): number;
  /** Closes with a closing handshake; resolves once the coordinator answered it (or after a second). */
  close(): Promise<void>;
  /** Drops the socket at once (a link that went silent is not worth a closing handshake). */
  terminate(): void;
}

/** Options for connecting. */
export interface ConnectOptions {
  url: string;
  token: string;
  giveUpAfterMs: number;
  /** PEM CA certificate(s) trusted for wss:// (in addition to the system's). */
  ca?: Buffer;
  onMessage(m: CoordinatorMessage): void;
  /** The link closed; `reason` is the coordinator's (a refusal says why), empty when none was given. */
  onClose(code: number, reason: string): void;
  log(line: string): void;
}

/** Connects, retrying with exponential backoff (0.2 s … 5 s) until `giveUpAfterMs`. */
export async function connectLink(opts: ConnectOptions): Promise<Link> {
  const deadline = Date.now() + opts.giveUpAfterMs;
  let delayMs = 200;
  for (let attempt = 1; ; attempt++) {
    try {
      return await openOnce(opts);
    } catch (err) {
      if (err instanceof LoadfleetError) throw err; // refused: retrying cannot help
      const mismatch = await tlsMismatch(opts.url, err as NodeJS.ErrnoException);
      if (mismatch) throw new LoadfleetError(ErrorCode.TLS_MISMATCH, mismatch, { exitCode: ExitCode.INVALID_INPUT });
      if (Date.now() + delayMs > deadline) {
        throw new LoadfleetError(
          ErrorCode.JOIN_TIMEOUT,
          `could not reach the coordinator at ${opts.url} after ${attempt} attempts: ${(err as Error).message}`,
        );
      }
      if (attempt === 1 || attempt % 10 === 0) opts.log(`coordinator not reachable yet (${(err as Error).message}); retrying`);
      await new Promise((r) => setTimeout(r, delayMs));
      delayMs = Math.min(5000, delayMs * 2);
    }
  }
}

// Certificate errors a retry cannot fix: the agent does not trust what the coordinator presents.
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * Why this connection can never succeed as configured, or null when a retry may help (the
 * coordinator is not up yet). A plain request to a TLS server ends in "socket hang up", which a
 * coordinator that is starting could also cause, so that case is told apart by trying a TLS
 * handshake on the same port.
 */
async function tlsMismatch(url: string, err: NodeJS.ErrnoException): Promise<string | null> {
  const u = new URL(url);
  if (u.protocol === 'wss:') {
    if (err.code !== undefined && UNTRUSTED.has(err.code))
      return `the coordinator's certificate is not trusted (${err.message}); pass its CA with --ca FILE`;
    if (err.code === 'EPROTO' || /wrong version number|packet length too long/i.test(err.message))
      return `the coordinator at ${u.host} does not speak TLS (${err.message}); use ws:// instead of wss://`;
    return null;
  }
  if (!/socket hang up|ECONNRESET/.test(`${err.message} ${err.code ?? ''}`)) return null;
  const speaksTls = await new Promise<boolean>((resolve) => {
    const socket = tlsConnect({ host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || 80), rejectUnauthorized: false });
    const done = (yes: boolean): void => {
      socket.destroy();
      resolve(yes);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('secureConnect', () => done(true));
    socket.once('error', () => done(false));
  });
  return speaksTls ? `the coordinator at ${u.host} speaks TLS; use wss:// (and --ca FILE if its certificate is self-signed)` : null;
}

function endpoint(url: string): string {
  const u = new URL(url);
  if (u.pathname === '/' || u.pathname === '') u.pathname = AGENT_PATH;
  return u.toString();
}

function openOnce(opts: ConnectOptions): Promise<Link> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(endpoint(opts.url), {
      headers: { authorization: `Bearer ${opts.token}`, [PROTOCOL_HEADER]: String(PROTOCOL_VERSION) },
      handshakeTimeout: 5000,
      perMessageDeflate: false,
      ...(opts.ca ? { ca: opts.ca } : {}),
    });
    ws.binaryType = 'nodebuffer';
    let refused = false;
    ws.on('unexpected-response', (req, res) => {
      // A refusal is final: read why, then give up instead of retrying.
      refused = true;
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        const code = res.statusCode === 426 ? ErrorCode.PROTOCOL_MISMATCH : ErrorCode.AUTH_REFUSED;
        reject(
          new LoadfleetError(code, `coordinator refused the connection (HTTP ${res.statusCode}): ${body.trim()}`, {
            exitCode: ExitCode.INVALID_INPUT,
          }),
        );
        req.destroy();
      });
    });
    ws.once('error', (err) => {
      if (!refused) reject(err);
    });
    ws.once('open', () => {
      ws.removeAllListeners('error');
      ws.on('error', (err) => opts.log(`link error: ${err.message}`));
      ws.on('message', (data: Buffer) => {
        try {
          opts.onMessage(decodeCoordinatorMessage(data));
        } catch (err) {
          opts.log(`ignored a bad frame from the coordinator: ${(err as Error).message}`);
        }
      });
      // A link that stops carrying frames without closing is dropped by the heartbeat (onClose follows).
      const stopHeartbeat = heartbeat(ws, () => opts.log(`coordinator silent for ${LINK_SILENCE_MS / 1000} s: dropping the link`));
      ws.on('close', (code: number, reason: Buffer) => {
        stopHeartbeat();
        opts.onClose(code, reason.toString());
      });
      resolve({
        send: (m) => {
          if (ws.readyState === WebSocket.OPEN) ws.send(encodeMessage(m));
        },
        bufferedBytes: () => ws.bufferedAmount,
        close: () =>
          new Promise<void>((resolve) => {
            if (ws.readyState === WebSocket.CLOSED) return resolve();
            const timer = setTimeout(resolve, CLOSE_WAIT_MS);
            ws.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
            ws.close(1000, 'done');
          }),
        terminate: () => ws.terminate(),
      });
    });
  });
}
