// Waiting for an instant on the event loop: a coarse timer until ~2 ms before, then yielding with
// setImmediate until it is due, because timers alone quantise to about 1 ms.

// Node timers have 1 ms granularity; yielding for the last 1.2 ms keeps sends on time without
// burning a core between them.
const SPIN_NS = 1_200_000;

/** Resolves at (or just after) `dueNs` on the `nowNs` clock, or early when `signal` aborts. */
export function sleepUntil(nowNs: () => number, dueNs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const step = (): void => {
      const wait = dueNs - nowNs();
      if (signal?.aborted || wait <= 0) resolve();
      else if (wait > SPIN_NS) setTimeout(step, (wait - SPIN_NS) / 1e6 + 0.5);
      else setImmediate(step);
    };
    step();
  });
}
