// The coordinator's /metrics endpoint: a plain HTTP server that renders the current run's live
// figures on every scrape. It outlives single runs (an experiment can keep one endpoint for all
// its runs); between runs it keeps serving the last run's final figures.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import { EXPOSITION_CONTENT_TYPE } from './exposition.js';

/** Path the exposition is served at. */
export const METRICS_PATH = '/metrics';

/** A listening /metrics endpoint. */
export class MetricsEndpoint {
  private render: () => string = () => '';

  private constructor(
    private readonly server: Server,
    /** The port it listens on (the chosen one when asked for 0). */
    readonly port: number,
    /** e.g. http://127.0.0.1:9464/metrics */
    readonly url: string,
  ) {}

  /** Listens on host:port (port 0: any free port); a port in use is a usage error (exit 2). */
  static async open(host: string, port: number): Promise<MetricsEndpoint> {
    let endpoint: MetricsEndpoint | undefined;
    const server = createServer((req, res) => endpoint?.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) =>
        reject(
          new LoadfleetError(ErrorCode.USAGE, `--metrics-host ${host} --metrics-port ${port}: cannot listen (${err.code ?? err.message})`, {
            exitCode: ExitCode.INVALID_INPUT,
          }),
        ),
      );
      server.listen(port, host, () => resolve());
    });
    const actual = (server.address() as AddressInfo).port;
    endpoint = new MetricsEndpoint(server, actual, `http://${host.includes(':') ? `[${host}]` : host}:${actual}${METRICS_PATH}`);
    return endpoint;
  }

  /** From now on every scrape renders `render()` (the current run's figures). */
  serve(render: () => string): void {
    this.render = render;
  }

  /** Stops listening and drops idle keep-alive connections. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '').split('?')[0];
    if (path !== METRICS_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`only GET ${METRICS_PATH} is served here\n`);
      return;
    }
    let body: string;
    try {
      body = this.render();
    } catch (err) {
      // A rendering bug must not take the run down with it: the scraper sees a 500 instead.
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(err as Error).message}\n`);
      return;
    }
    res.writeHead(200, { 'content-type': EXPOSITION_CONTENT_TYPE, 'content-length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  }
}
