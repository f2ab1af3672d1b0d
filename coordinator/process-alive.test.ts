import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { procState, writerAlive } from './process-alive.js';

const children: { kill(s: NodeJS.Signals): unknown }[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

describe('whether a journal writer is alive', () => {
  it('a zombie answers kill(pid, 0) but is dead; a live process is alive; one started after the journal was written is another process', async () => {
    // sh prints its child's pid and becomes `sleep 30`, which never reaps that child: a zombie once it exits.
    const parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(parent);
    const [chunk] = (await once(parent.stdout!, 'data')) as [Buffer];
    const zombie = Number(chunk.toString().trim());
    expect(writerAlive(zombie, Date.now())).toBe(true);
    const deadline = Date.now() + 5000;
    while (procState(zombie)?.state !== 'Z' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(procState(zombie)?.state).toBe('Z');
    expect(() => process.kill(zombie, 0)).not.toThrow(); // what the old check read as running
    expect(writerAlive(zombie, Date.now())).toBe(false);
    // The parent (sleep 30) is alive, and started before now; against a journal written an hour before it started, it is another process.
    expect(writerAlive(parent.pid!, Date.now())).toBe(true);
    expect(writerAlive(parent.pid!, Date.now() - 3_600_000)).toBe(false);
    expect(Math.abs(procState(parent.pid!)!.startedMs - Date.now())).toBeLessThan(10_000);
    // This process is never the writer: a restarted coordinator may have its predecessor's pid.
    expect(writerAlive(process.pid, Date.now())).toBe(false);
    expect(writerAlive(4_194_304 + 7, Date.now())).toBe(false);
  });
});
