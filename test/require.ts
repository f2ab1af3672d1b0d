// What a suite needs from the machine. By hand, a suite whose tool is missing is skipped with a
// warning naming what to install; under LOADFLEET_REQUIRE_ALL=1 (set by .ci/run) the same lack
// fails the suite instead, so CI can never pass with a suite quietly not run.

/** The environment variable that turns a missing tool from a skip into a failure. */
export const REQUIRE_ALL_ENV = 'LOADFLEET_REQUIRE_ALL';

/**
 * True when the suite must be skipped because `missing` (what is lacking and how to install it, or
 * null when nothing is) — unless every suite is required, in which case it throws, failing the file.
 */
export function skipFor(suite: string, missing: string | null): boolean {
  if (missing === null) return false;
  if (process.env[REQUIRE_ALL_ENV] === '1') throw new Error(`${suite} cannot run: ${missing} (${REQUIRE_ALL_ENV}=1 forbids skipping)`);
  console.warn(`${suite} SKIPPED: ${missing}`);
  return true;
}
