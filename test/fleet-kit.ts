// The fleet tests' pieces (fleet.test.ts, fleet-runs.test.ts): a listening coordinator, agents
// started apart from it, and waits on what a process prints.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startNode, waitFor } from './harness.js';

export const TOKEN = { LOADFLEET_TOKEN: 'fleet-test-token' };

/** A coordinator command listening on a free loopback port; resolves once it waits for agents. */
export async function listening(args: readonly string[]) {
  const coord = startNode('coordinator/main.js', [...args, '--listen', '127.0.0.1:0'], TOKEN);
  const [, url] = await waitFor(coord.child.stderr!, /waiting for \d+ agent\(s\) at (ws:\/\/[\d.:]+)/);
  return { coord, url: url! };
}

export function agent(url: string, id: string, spool: string, extra: readonly string[] = []) {
  return startNode('agent/main.js', ['--coordinator', url, '--id', id, '--spool-dir', spool, ...extra], TOKEN);
}

export function onlyDir(out: string): string {
  const [dir] = readdirSync(out);
  return join(out, dir!);
}

export const readJson = (path: string): any => JSON.parse(readFileSync(path, 'utf8'));

/** Everything a process has printed on stderr so far, from its start. */
export function stderrOf(p: { child: { stderr: NodeJS.ReadableStream | null } }): () => string {
  let text = '';
  p.child.stderr!.on('data', (c: Buffer) => (text += c.toString()));
  return () => text;
}

/** Resolves once `text()` matches `pattern` (polled), rejects after `timeoutMs`. */
export async function until(text: () => string, pattern: RegExp, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(text())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; got:\n${text()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
