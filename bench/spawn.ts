// Starting the benchmark's child processes: each client and server runs in its own process so
// its CPU time is its own, and through `sh -c 'ulimit -n …'` where it must hold many sockets.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Open-file limit asked for every child (10,000 streams need 10,000 sockets on each side). */
export const NOFILE = 65536;

/** Absolute path of a compiled file relative to dist/ (e.g. `coordinator/main.js`). */
export function distFile(rel: string): string {
  return fileURLToPath(new URL(`../${rel}`, import.meta.url));
}

/** Absolute path of a file in the source tree's bench/ (files tsc does not copy, like the .py client). */
export function benchSource(name: string): string {
  return fileURLToPath(new URL(`../../bench/${name}`, import.meta.url));
}

/** A started child with its output collected. */
export interface Child {
  child: ChildProcess;
  pid: number;
  /** Resolves at exit with the exit code and everything printed. */
  exited: Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Resolves with the first stdout line (servers print a JSON listening line first). */
  firstLine: Promise<string>;
  /** SIGTERM, then SIGKILL after 3 s; resolves at exit. */
  stop(): Promise<void>;
}

/** Runs `command args…` under a raised open-file limit, stdout and stderr collected. */
export function startChild(command: string, args: readonly string[], env: Record<string, string> = {}): Child {
  // `exec "$0" "$@"` keeps the pid: the shell becomes the program, so /proc/<pid> is the client.
  const child = spawn('sh', ['-c', `ulimit -n ${NOFILE} 2>/dev/null || true; exec "$0" "$@"`, command, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  let lineSeen = false;
  let onLine: (line: string) => void = () => {};
  const firstLine = new Promise<string>((resolve, reject) => {
    onLine = resolve;
    child.once('exit', (code) => {
      if (!lineSeen) reject(new Error(`${command} exited (${code}) before printing a line: ${stderr.slice(-2000)}`));
    });
  });
  firstLine.catch(() => {});
  child.stdout!.on('data', (c: Buffer) => {
    stdout += c.toString();
    const nl = stdout.indexOf('\n');
    if (!lineSeen && nl !== -1) {
      lineSeen = true;
      onLine(stdout.slice(0, nl));
    }
  });
  child.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('exit', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, pid: child.pid!, exited, firstLine, stop: () => stopChild(child, exited) };
}

/** Runs `node <dist file> args…` (see startChild). */
export function startNode(distRel: string, args: readonly string[], env: Record<string, string> = {}): Child {
  return startChild(process.execPath, [distFile(distRel), ...args], env);
}

function stopChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  child.kill('SIGTERM');
  return exited.then(() => clearTimeout(timer));
}

/** The last line of `stdout` parsed as JSON (clients print their result there). */
export function lastJsonLine<T>(stdout: string): T {
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] ?? '') as T;
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
