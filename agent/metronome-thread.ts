// The metronome's thread: it sleeps in Atomics.wait until the earliest instant the agent's loop
// asked for (a futex with a sub-millisecond timeout, where the loop's own timers have 1 ms steps),
// then wakes that loop with one message. Nothing else runs here, so its wake is late only by the
// kernel's timer slack. See metronome.ts for the shared slots.
import { parentPort, workerData } from 'node:worker_threads';
import { GENERATION, READY, STOP, TICK } from './metronome-slots.js';

const { due, control } = workerData as { due: SharedArrayBuffer; control: SharedArrayBuffer };
const target = new BigInt64Array(due);
const slots = new Int32Array(control);

parentPort!.postMessage(READY); // the loop serves its own waits until this thread is up (~30 ms)

for (;;) {
  const generation = Atomics.load(slots, GENERATION);
  if (Atomics.load(slots, STOP) !== 0) break;
  const at = Atomics.load(target, 0);
  if (at === 0n) {
    Atomics.wait(slots, GENERATION, generation); // nothing asked for: sleep until something is
    continue;
  }
  const waitMs = Number(at - process.hrtime.bigint()) / 1e6;
  if (waitMs > 0) {
    Atomics.wait(slots, GENERATION, generation, waitMs); // woken early by an earlier instant
    continue;
  }
  // Due. Cleared only if the loop has not meanwhile asked for an earlier instant (it never asks
  // for a later one while one is armed), which the next pass then serves at once.
  if (Atomics.compareExchange(target, 0, at, 0n) === at) parentPort!.postMessage(TICK);
}
