// Local mode's processes: the engine-sim target and N agent processes on this machine. Each runs
// in its own process group, so a Ctrl-C reaches only the coordinator, which then stops them in
// order and still collects their data.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { AGENT_NODE_FLAGS } from '../shared/agent-node-flags.js';
import { ErrorCode, LoadfleetError } from '../shared/errors.js';
import { TOKEN_ENV } from '../shared/protocol.js';

const SIM_MAIN = fileURLToPath(new URL('../sim/main.js', import.meta.url));
const AGENT_MAIN = fileURLToPath(new URL('../agent/main.js', import.meta.url));
const TAIL_LINES = 40;

/** A started engine-sim. */
export interface LocalSim {
  baseUrl: string;
  metricsUrl: string;
  /** Gateway mode: the replicas' and the gateway's metrics apart. */
  vllmMetricsUrl?: string;
  eppMetricsUrl?: string;
  model: string;
  stop(): Promise<void>;
}

/** Starts engine-sim on a loopback port (0: a free one) and waits for its listening line. */
export function startLocalSim(
  args: readonly string[],
  log: (line: string) => void,
  env: Record<string, string> = {},
  port = 0,
): Promise<LocalSim> {
  // Its own process group (Ctrl-C reaches only the coordinator), but its stdin is ours: if the
  // coordinator dies, even by SIGKILL, the pipe closes and engine-sim exits instead of lingering.
  const child = spawn(process.execPath, [SIM_MAIN, '--host', '127.0.0.1', '--port', String(port), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, ...env, ENGINE_SIM_EXIT_WITH_STDIN: '1' },
  });
  const tail = keepTail(child, 'engine-sim', log);
  return new Promise((resolve, reject) => {
    let buffered = '';
    const fail = (why: string): void =>
      reject(new LoadfleetError(ErrorCode.TARGET_START_FAILED, `engine-sim did not start: ${why}\n${tail().join('\n')}`));
    child.once('exit', (code) => fail(`exited with code ${code}`));
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const nl = buffered.indexOf('\n');
      if (nl === -1) return;
      try {
        const line = JSON.parse(buffered.slice(0, nl)) as {
          event: string;
          base_url: string;
          metrics_url: string;
          vllm_metrics_url?: string;
          epp_metrics_url?: string;
          model: string;
        };
        child.removeAllListeners('exit');
        resolve({
          baseUrl: line.base_url,
          metricsUrl: line.metrics_url,
          ...(line.vllm_metrics_url ? { vllmMetricsUrl: line.vllm_metrics_url } : {}),
          ...(line.epp_metrics_url ? { eppMetricsUrl: line.epp_metrics_url } : {}),
          model: line.model,
          stop: () => stopChild(child),
        });
      } catch {
        fail(`unexpected first line ${JSON.stringify(buffered.slice(0, nl))}`);
      }
    });
  });
}

/** A spawned agent process: one agent, or several (a packed layout, local-layout.ts). */
export interface LocalAgent {
  /** The agents it serves. */
  ids: string[];
  exited: Promise<number | null>;
  tail(): string[];
  stop(): Promise<void>;
}

/**
 * Spawns one agent process per group of ids (each id one `--id`: the process serves each as an
 * agent of its own) that join `url`; the token travels in the environment, never in argv.
 */
export function spawnLocalAgents(
  groups: readonly (readonly string[])[],
  url: string,
  token: string,
  extraArgs: readonly string[],
  log: (line: string) => void,
): LocalAgent[] {
  return groups.map((ids) => {
    const name = ids.join('+');
    const child = spawn(
      process.execPath,
      // --coordinator-wait-s 0: only this coordinator can take a local agent's spool, and a new one
      // on this machine spawns agents of the same ids that offer it; an orphan need not linger.
      [
        ...AGENT_NODE_FLAGS,
        AGENT_MAIN,
        '--coordinator',
        url,
        ...ids.flatMap((id) => ['--id', id]),
        '--coordinator-wait-s',
        '0',
        ...extraArgs,
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        detached: true,
        env: { ...process.env, [TOKEN_ENV]: token },
      },
    );
    const tail = keepTail(child, name, () => {});
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    void exited.then((code) => {
      if (code !== 0) log(`${name} exited with code ${code}; its last lines:\n  ${tail().join('\n  ')}`);
    });
    return { ids: [...ids], exited, tail, stop: () => stopChild(child) };
  });
}

function keepTail(child: ChildProcess, name: string, log: (line: string) => void): () => string[] {
  const lines: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) {
      if (!line) continue;
      lines.push(line);
      if (lines.length > TAIL_LINES) lines.shift();
      log(`[${name}] ${line}`);
    }
  });
  return () => lines;
}

// SIGTERM first; SIGKILL if it has not gone within 3 s.
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
