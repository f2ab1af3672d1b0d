// Where agents register: an HTTP server whose only upgrade path is the agents' WebSocket. The
// token and protocol are checked on the upgrade request, so a refused peer never gets a socket,
// and every frame is decoded and checked before anyone acts on it.
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { LINK_SILENCE_MS } from '../shared/delivery.js';
import { heartbeat } from '../shared/heartbeat.js';
import type { AgentMessage, CoordinatorMessage } from '../shared/protocol.js';
import { AGENT_PATH, CLOSE_CODE, checkUpgrade, decodeAgentMessage, encodeMessage, PROTOCOL_VERSION } from '../shared/protocol.js';

/** The hello an agent introduced itself with. */
export type Hello = Extract<AgentMessage, { type: 'hello' }>;

/** One joined agent's link. */
export class AgentConn {
  closed = false;
  /** The WebSocket close code once closed: 1000 is a closing handshake the agent began or answered. */
  closeCode: number | null = null;
  /** The agent's position in the current run (agents[] order); the fleet sets it per run. */
  index = -1;
  private readonly handlers = new Set<(m: AgentMessage, raw?: Uint8Array) => void>();
  private readonly closeHandlers = new Set<() => void>();

  constructor(
    readonly hello: Hello,
    readonly remote: string,
    private readonly ws: WebSocket,
  ) {}

  /** Sends a message (dropped if the socket is gone). */
  send(m: CoordinatorMessage): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(encodeMessage(m));
  }

  /** Subscribes to this agent's messages (with the frame's bytes, for the run's journal); returns the unsubscribe function. */
  onMessage(fn: (m: AgentMessage, raw?: Uint8Array) => void): () => void {
    this.handlers.add(fn);
    return () => this.handlers.delete(fn);
  }

  /** Called once when the connection closes; returns the unsubscribe function. */
  onClose(fn: () => void): () => void {
    this.closeHandlers.add(fn);
    return () => this.closeHandlers.delete(fn);
  }

  /** Closes the link (1000 = normal; 4xxx codes carry our reasons, cut to the 123 bytes a close frame holds). */
  close(reason = 'run finished', code = 1000): void {
    let why = reason;
    while (Buffer.byteLength(why) > 123) why = why.slice(0, -1);
    this.ws.close(code, why);
  }

  /** Drops the socket without a closing handshake (a link that went silent). */
  terminate(): void {
    this.ws.terminate();
  }

  /** Subscriptions on this link (a run's channel removes its own when the run ends). */
  listenerCount(): number {
    return this.handlers.size + this.closeHandlers.size;
  }

  deliver(m: AgentMessage, raw?: Uint8Array): void {
    for (const fn of this.handlers) fn(m, raw);
  }

  closedNow(code: number): void {
    this.closed = true;
    this.closeCode = code;
    for (const fn of this.closeHandlers) fn();
  }
}

/** Server options. */
export interface AgentServerOptions {
  host: string;
  port: number;
  token: string;
  /** PEM certificate and key: serve wss:// instead of ws://. */
  tls?: { cert: Buffer; key: Buffer };
  log(line: string): void;
}

const HELLO_TIMEOUT_MS = 5000;

/** Authenticates agents and hands each one that said a well-formed hello to `onHello` (the fleet decides). */
export class AgentServer {
  onHello: (conn: AgentConn) => void = (conn) => conn.close('not accepting agents', CLOSE_CODE.FINISHING);
  private readonly http: Server;
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });

  constructor(private readonly opts: AgentServerOptions) {
    const notHere: RequestListener = (_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('loadfleet coordinator: agents connect over WebSocket\n');
    };
    this.http = opts.tls ? createTlsServer({ cert: opts.tls.cert, key: opts.tls.key }, notHere) : createServer(notHere);
    this.http.on('upgrade', (req, socket, head) => this.upgrade(req, socket, head));
  }

  /** Starts listening; resolves with the bound port. */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(this.opts.port, this.opts.host, () => resolve((this.http.address() as AddressInfo).port));
    });
  }

  /** Stops accepting and drops every link still open. */
  async close(): Promise<void> {
    for (const ws of this.wss.clients) ws.terminate();
    await new Promise<void>((r) => this.http.close(() => r()));
  }

  private refuse(socket: Duplex, status: number, message: string, remote: string): void {
    this.opts.log(`refused a connection from ${remote}: ${message}`);
    socket.end(
      `HTTP/1.1 ${status} Refused\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(message)}\r\n\r\n${message}`,
    );
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const remote = `${req.socket.remoteAddress}:${req.socket.remotePort}`;
    socket.on('error', () => {});
    const refusal =
      new URL(req.url ?? '/', 'http://x').pathname !== AGENT_PATH
        ? { status: 404, message: `no such path; agents connect to ${AGENT_PATH}` }
        : checkUpgrade(req.headers, this.opts.token);
    if (refusal) this.refuse(socket, refusal.status, refusal.message, remote);
    else this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, remote));
  }

  // A socket becomes an agent only after a well-formed hello of the same protocol.
  private accept(ws: WebSocket, remote: string): void {
    let conn: AgentConn | undefined;
    const helloTimer = setTimeout(() => ws.close(4000, 'no hello'), HELLO_TIMEOUT_MS);
    const stopHeartbeat = heartbeat(ws, () =>
      this.opts.log(`link to ${conn?.hello.agent_id ?? remote} silent for ${LINK_SILENCE_MS / 1000} s: dropping it`),
    );
    ws.on('error', (err) => this.opts.log(`link error with ${conn?.hello.agent_id ?? remote}: ${err.message}`));
    ws.on('message', (data: Buffer) => {
      let m: AgentMessage;
      try {
        m = decodeAgentMessage(data);
      } catch (err) {
        this.opts.log(`ignored a malformed frame from ${conn?.hello.agent_id ?? remote}: ${(err as Error).message}`);
        if (!conn) ws.close(4002, 'malformed frame before hello');
        return;
      }
      if (conn) return conn.deliver(m, data);
      if (m.type !== 'hello' || m.protocol !== PROTOCOL_VERSION) {
        this.opts.log(`refused ${remote}: first message must be a protocol ${PROTOCOL_VERSION} hello`);
        return ws.close(4001, 'expected hello');
      }
      clearTimeout(helloTimer);
      conn = new AgentConn(m, remote, ws);
      this.onHello(conn);
    });
    ws.on('close', (code: number) => {
      clearTimeout(helloTimer);
      stopHeartbeat();
      conn?.closedNow(code);
    });
  }
}
