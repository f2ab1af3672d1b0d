// Sends waiting for their instant, released by whichever sees the instant first: the wake-up the
// open loop sleeps on (timing.ts), or any socket read the loop handles meanwhile.
//
// Why reads: a loop handling a burst of reads (every stream's chunk landing in one poll) handles
// them all before its timers and immediates; a send due in the middle of the burst waited for its
// end. At 1,000 req/s on one agent the loop has runs of 2–5 ms of reads, writes and bookkeeping,
// and they make the schedule lag's p99; the reads are the part a send can cut into. Each read is
// stamped anyway, so the same clock reading tells whether a send is due; if one is, it goes out
// right after that read's handler (a microtask), before the next socket of the burst is read.
import { sleepUntil } from './timing.js';

interface Waiting {
  dueNs: number;
  release: () => void;
}

/** The sends waiting now: one per open-loop stripe at most, so a read checks a handful. */
const waiting: Waiting[] = [];
/** The earliest instant among them (Infinity when none): a read compares against this alone. */
let earliestNs = Number.POSITIVE_INFINITY;

function remove(w: Waiting): void {
  const i = waiting.indexOf(w);
  if (i === -1) return;
  waiting.splice(i, 1);
  earliestNs = Number.POSITIVE_INFINITY;
  for (const o of waiting) if (o.dueNs < earliestNs) earliestNs = o.dueNs;
}

/**
 * Resolves at `dueNs` on the `nowNs` clock: at the loop's wake-up for it, or right after a read
 * stamped at or past it, whichever is first (or early when `signal` aborts).
 */
export function sendAt(nowNs: () => number, dueNs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const w: Waiting = {
      dueNs,
      release: () => {
        if (done) return;
        done = true;
        remove(w);
        resolve();
      },
    };
    waiting.push(w);
    if (dueNs < earliestNs) earliestNs = dueNs;
    // The wake-up that serves an idle loop; if a read released the send first, it ends unheard.
    void sleepUntil(nowNs, dueNs, signal, () => done).then(w.release);
  });
}

/** Called with the stamp of each socket read: releases the sends due by then, after this read's handler. */
export function readAt(nowNs: number): void {
  if (nowNs < earliestNs) return;
  for (const w of waiting) if (w.dueNs <= nowNs) queueMicrotask(w.release);
}
