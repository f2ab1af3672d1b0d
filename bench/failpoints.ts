// failpoints: what a failpoint costs when nothing is armed (the product's case), beside a call
// that does nothing and beside the journal's own append. Run it with LOADFLEET_FAILPOINTS unset;
// set to a name the loop never passes (e.g. recover.rejoin=kill) it measures the armed process's
// lookup instead.
// Not a suite: `node dist/bench/failpoints.js [--calls N]` prints one JSON document.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { messageFrame } from '../coordinator/journal/frame.js';
import { JournalWriter } from '../coordinator/journal/writer.js';
import type { FailpointName } from '../shared/failpoints.js';
import { failpoint } from '../shared/failpoints.js';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const CALLS = arg('--calls', 50_000_000);
const NAMES: FailpointName[] = ['journal.append', 'journal.flush.before-write', 'journal.flush.before-sync', 'journal.flush.after-sync'];

let sink = 0;
// A function the JIT cannot drop: the baseline a call costs.
function nothing(name: string): void {
  if (name.length === 0) sink++;
}

function nsPerCall(f: (name: FailpointName) => void): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) f(NAMES[i & 3]!);
  return Number(process.hrtime.bigint() - t0) / CALLS;
}

// The best of five rounds, each side alternating, so a busy machine's bursts fall on both.
const rounds = { failpoint: [] as number[], nothing: [] as number[] };
for (let r = 0; r < 5; r++) {
  rounds.nothing.push(nsPerCall(nothing));
  rounds.failpoint.push(nsPerCall(failpoint));
}

// The journal's append (no flush awaited: frames only queued into groups), for scale.
const dir = mkdtempSync(join(tmpdir(), 'lf-fp-bench-'));
const w = await JournalWriter.open(join(dir, 'j'), () => {}, { maxDelayMs: 1e6, maxFrames: 1e9, maxBytes: 1e12 });
const frame = messageFrame(0, 'e', Buffer.alloc(64));
const appends = 200_000;
const t0 = process.hrtime.bigint();
for (let i = 0; i < appends; i++) void w.append(frame);
const appendNs = Number(process.hrtime.bigint() - t0) / appends;
await w.close();
rmSync(dir, { recursive: true, force: true });

const best = (xs: number[]): number => Math.min(...xs);
process.stdout.write(
  `${JSON.stringify(
    {
      bench: 'failpoints',
      armed: process.env.LOADFLEET_FAILPOINTS ?? null,
      calls: CALLS,
      ns_per_call: { failpoint: best(rounds.failpoint), nothing: best(rounds.nothing) },
      rounds,
      journal_append_ns: appendNs,
      sink,
    },
    null,
    2,
  )}\n`,
);
