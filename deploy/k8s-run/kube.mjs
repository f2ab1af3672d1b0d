// kubectl, the wrapper's only way to the cluster ($KUBECTL overrides the binary, which is how the
// tests put a scripted cluster in its place).
import { spawn, spawnSync } from 'node:child_process';

export function kubectl(namespace) {
  const bin = process.env.KUBECTL ?? 'kubectl';
  const ns = namespace ? [`--namespace=${namespace}`] : [];
  const run = (args, input) => {
    const r = spawnSync(bin, [...ns, ...args], { encoding: 'utf8', input, maxBuffer: 512 * 1024 * 1024 });
    return { code: r.status ?? 1, stdout: r.stdout ?? '', stderr: r.stderr || (r.error?.message ?? '') };
  };
  /** The same, without blocking: for questions asked together (the preflight's permissions). */
  const runAsync = (args) =>
    new Promise((resolve) => {
      const child = spawn(bin, [...ns, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.on('error', (err) => resolve({ code: 1, stdout, stderr: err.message }));
      child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  return {
    bin,
    run,
    runAsync,
    /** The parsed `-o json` answer, or undefined when kubectl failed (not found, forbidden, …). */
    json(args) {
      const r = run([...args, '-o', 'json']);
      if (r.code !== 0) return undefined;
      try {
        return JSON.parse(r.stdout);
      } catch {
        return undefined;
      }
    },
    /** A long-running kubectl (logs -f) whose lines go to `line`. */
    follow(args, line) {
      const child = spawn(bin, [...ns, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
      let rest = '';
      child.stdout.on('data', (chunk) => {
        const parts = (rest + chunk.toString()).split('\n');
        rest = parts.pop() ?? '';
        for (const p of parts) line(p);
      });
      return child;
    },
  };
}
