// The agent's WebSocket link to the coordinator: connect with backoff until it is up, refuse to
// retry when the coordinator said no (wrong token, other protocol), frame every message.
import WebSocket from 'ws';
import { ErrorCode, ExitCode, LoadfleetError } from '../shared/errors.js';
import type { AgentMessage, CoordinatorMessage } from '../shared/protocol.js';
import { AGENT_PATH, decodeCoordinatorMessage, encodeMessage, PROTOCOL_HEADER, PROTOCOL_VERSION } from '../shared/protocol.js';

/** An open link. */
export interface Link {
  send(m: AgentMessage): void;
  /** Bytes queued in the socket but not yet written (for backpressure). */
  bufferedBytes(): number;
  close(): void;
}

/** Options for connecting. */
export interface ConnectOptions {
  url: string;
  token: string;
  giveUpAfterMs: number;
  /** PEM CA certificate(s) trusted for wss:// (in addition to the system's). */
  ca?: Buffer;
  onMessage(m: CoordinatorMessage): void;
  onClose(code: number): void;
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
      ws.on('close', (code: number) => opts.onClose(code));
      resolve({
        send: (m) => {
          if (ws.readyState === WebSocket.OPEN) ws.send(encodeMessage(m));
        },
        bufferedBytes: () => ws.bufferedAmount,
        close: () => ws.close(1000, 'done'),
      });
    });
  });
}
