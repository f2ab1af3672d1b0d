// The time source the vLLM engine model and the gateway run on. The server uses real wall time;
// tests and the offline fit use a virtual clock that jumps from event to event, so a 240 s
// scenario replays in well under a second through exactly the code the server runs.
import { performance } from 'node:perf_hooks';

/** A pending timer; cancel() is idempotent. */
export interface TimerHandle {
  cancel(): void;
}

/** Monotonic seconds plus one-shot timers at absolute times. */
export interface SimClock {
  /** Seconds on a monotonic clock (arbitrary origin). */
  nowS(): number;
  /** Runs `fn` once the clock reaches `atS`; a time already past runs after the current task. */
  at(atS: number, fn: () => void): TimerHandle;
}

// A timer may fire this much before its due time and still count as due (it absorbs the rounding
// between Node's millisecond timer clock and performance.now()).
const EARLY_TOLERANCE_S = 1e-4;

/** Wall time: performance.now() with setTimeout/setImmediate, re-armed when a timer fires early. */
export const realClock: SimClock = {
  nowS: () => performance.now() / 1000,
  at(atS, fn) {
    let timeout: NodeJS.Timeout | undefined;
    let immediate: NodeJS.Immediate | undefined;
    const arm = (): void => {
      const delayS = atS - realClock.nowS();
      if (delayS <= EARLY_TOLERANCE_S) immediate = setImmediate(fn);
      else timeout = setTimeout(arm, Math.max(1, delayS * 1000));
    };
    arm();
    return {
      cancel() {
        clearTimeout(timeout);
        if (immediate) clearImmediate(immediate);
      },
    };
  },
};

interface VirtualTimer {
  atS: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** Simulated time: `run()` executes timers in time order and jumps the clock to each. */
export class VirtualClock implements SimClock {
  private now = 0;
  private seq = 0;
  private readonly heap: VirtualTimer[] = [];

  /** The current simulated time. */
  nowS(): number {
    return this.now;
  }

  /** Schedules `fn` at `atS` (clamped to now); equal times run in scheduling order. */
  at(atS: number, fn: () => void): TimerHandle {
    const timer: VirtualTimer = { atS: Math.max(atS, this.now), seq: this.seq++, fn, cancelled: false };
    this.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Runs every timer due up to `untilS` (all of them by default); returns how many ran. */
  run(untilS = Number.POSITIVE_INFINITY): number {
    let ran = 0;
    while (this.heap.length > 0 && this.heap[0]!.atS <= untilS) {
      const timer = this.pop();
      if (timer.cancelled) continue;
      this.now = timer.atS;
      timer.fn();
      ran += 1;
    }
    if (Number.isFinite(untilS)) this.now = Math.max(this.now, untilS);
    return ran;
  }

  private push(timer: VirtualTimer): void {
    const heap = this.heap;
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!earlier(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): VirtualTimer {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && earlier(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && earlier(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  }
}

function earlier(a: VirtualTimer, b: VirtualTimer): boolean {
  return a.atS < b.atS || (a.atS === b.atS && a.seq < b.seq);
}
