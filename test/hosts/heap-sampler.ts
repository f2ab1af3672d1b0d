// Preloaded into a process under test (NODE_OPTIONS=--require …/heap-sampler.js): once every
// LOADFLEET_TEST_HEAP_EVERY_MS (default 1000) it forces a full garbage collection and appends
// "<unix ms> <heapUsed> <external>" (bytes) to LOADFLEET_TEST_HEAP_LOG. The JS heap still in use
// after a full collection is what the process retains of its objects; resident memory (RSS) also
// moves with the allocator and the collector's own pacing, several MiB either way in a 30 s run,
// which hides a per-request leak of a few hundred KiB. External memory (Buffers, typed arrays) is
// logged too, but it holds the frames in flight on a faulted link (8–27 MiB swings in the soak).
import { appendFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const out = process.env.LOADFLEET_TEST_HEAP_LOG;
if (out) {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const sample = (): void => {
    gc();
    const m = process.memoryUsage();
    appendFileSync(out, `${Date.now()} ${m.heapUsed} ${m.external}\n`);
  };
  setInterval(sample, Number(process.env.LOADFLEET_TEST_HEAP_EVERY_MS ?? 1000)).unref();
}
