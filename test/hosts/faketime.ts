// libfaketime, for an agent whose clock runs at another rate (the drift and chaos tests).
import { execFileSync } from 'node:child_process';

/** The rate the tests run a drifting agent's clock at: 500 ppm fast, exaggerated so a short run shows it. */
export const FAST_CLOCK = '+0 x1.0005';
/** The same library at the true rate: a control that pays faketime's own cost without drifting. */
export const TRUE_RATE_CLOCK = '+0 x1.0';

/** Why faketime cannot run here, or null when it can. */
export function faketimeUnavailable(): string | null {
  try {
    execFileSync('faketime', ['-f', FAST_CLOCK, 'true']);
    return null;
  } catch {
    return 'faketime is not installed (apt-get install faketime)';
  }
}
