// The reading side of stamp-proxy.ts: its stdout lines `stamp <request index> <arrival ns>` (the
// true clock of its namespace) collected into a map as they come, for tests that compare an
// agent's recorded send times with when the request really arrived.
import type { Readable } from 'node:stream';

/** Request index → arrival instant (ns) as stamp-proxy.ts printed it; filled while `stdout` flows. */
export function collectStamps(stdout: Readable): Map<number, bigint> {
  const stamps = new Map<number, bigint>();
  let buf = '';
  stdout.on('data', (c: Buffer) => {
    buf += c.toString();
    const lines = buf.split('\n');
    buf = lines.pop()!;
    for (const l of lines) {
      const m = /^stamp (\d+) (\d+)$/.exec(l);
      if (m) stamps.set(Number(m[1]), BigInt(m[2]!));
    }
  });
  return stamps;
}
