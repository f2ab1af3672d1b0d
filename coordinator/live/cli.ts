// The live-view flags and console, shared by every command that runs plans (`start`, and any
// command that runs several): `--metrics-port`/`--metrics-host`, and where log lines, progress
// lines and the terminal block go.
import { type Command, InvalidArgumentError } from 'commander';
import { MetricsEndpoint } from './metrics-server.js';
import { StickyBlock, type TerminalOut } from './terminal.js';

/** The parsed /metrics flags. */
export interface MetricsFlags {
  metricsPort?: number;
  metricsHost: string;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number 0..65535 (0: any free port)');
  return n;
}

/** Adds --metrics-port and --metrics-host to a command. */
export function addMetricsOptions(cmd: Command): Command {
  return cmd
    .option('--metrics-port <port>', 'serve live client-side metrics (Prometheus text) at /metrics on this port; 0 picks a free one', port)
    .option('--metrics-host <host>', 'address the --metrics-port server listens on', '127.0.0.1');
}

/**
 * Opens the endpoint when --metrics-port was given and says where it listens. The line is
 * written even with --quiet: with port 0 it is the only way to learn the port.
 */
export async function openMetrics(o: MetricsFlags, say: (line: string) => void): Promise<MetricsEndpoint | undefined> {
  if (o.metricsPort === undefined) return undefined;
  const endpoint = await MetricsEndpoint.open(o.metricsHost, o.metricsPort);
  say(`metrics at ${endpoint.url}`);
  return endpoint;
}

/** Where a command's output goes while runs are live. */
export interface LiveConsole {
  /** A `[coordinator] …` log line (above the block on a terminal; nothing when quiet). */
  log(line: string): void;
  /** A `[coordinator] …` line printed even when quiet (e.g. where /metrics listens). */
  notice(line: string): void;
  /** A plain progress line (nothing when quiet). */
  progress(line: string): void;
  /** Redraws the live block; present only when stderr is a capable terminal and not quiet. */
  block: ((lines: string[]) => void) | undefined;
  /** Leaves the last block on screen; what follows is printed below it. */
  release(): void;
}

/** The console for `stream` (stderr): a redrawn block on a terminal, plain lines otherwise. */
export function liveConsole(
  quiet: boolean,
  stream: TerminalOut & { isTTY?: boolean } = process.stderr,
  term = process.env.TERM,
): LiveConsole {
  const write = (line: string): void => void (quiet ? undefined : stream.write(`${line}\n`));
  // A dumb terminal cannot move the cursor, so it gets the plain lines.
  if (quiet || stream.isTTY !== true || term === 'dumb') {
    return {
      log: (line) => write(`[coordinator] ${line}`),
      notice: (line) => void stream.write(`[coordinator] ${line}\n`),
      progress: write,
      block: undefined,
      release: () => {},
    };
  }
  const sticky = new StickyBlock(stream);
  return {
    log: (line) => sticky.print(`[coordinator] ${line}`),
    notice: (line) => sticky.print(`[coordinator] ${line}`),
    progress: (line) => sticky.print(line),
    block: (lines) => sticky.update(lines),
    release: () => sticky.release(),
  };
}
