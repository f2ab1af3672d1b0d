// libfaketime, for an agent whose clock runs at another rate (the drift and chaos tests).
import { execFileSync } from 'node:child_process';

/** The rate the tests run a drifting agent's clock at: 500 ppm fast, exaggerated so a short run shows it. */
export const FAST_CLOCK = '+0 x1.0005';
/**
 * The control beside it: 0.1 ppm fast (3 µs over 30 s: no drift to speak of), yet it pays what any
 * rate other than 1 costs under libfaketime — its scaled sleep and poll timeouts round short waits
 * to zero, so the event loop spins: a 10 ms interval timer kept Node's loop 46% busy at x1.0000001
 * and 50% at x1.0005 against 1% at x1.0 or without faketime (2 cores, 2026-12-04). A control at
 * x1.0 would leave that cost in the fast agent's figures and call it the clock's.
 */
export const CONTROL_CLOCK = '+0 x1.0000001';

/** Why faketime cannot run here, or null when it can. */
export function faketimeUnavailable(): string | null {
  try {
    execFileSync('faketime', ['-f', FAST_CLOCK, 'true']);
    return null;
  } catch {
    return 'faketime is not installed (apt-get install faketime)';
  }
}
