import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { testFilesByProject } from './scripts/test-projects.js';

// Four projects, split by rule (scripts/test-projects.ts, docs/testing.md): `unit` (every test
// beside the code, and test/ files marked `// suite: contract`) is `npm test`; `e2e` (test/ files
// running real processes) runs LOADFLEET_E2E_WORKERS files at a time; `timing` (marked
// `// suite: timing`: assertions on times a busy machine would move) runs after them,
// LOADFLEET_TIMING_WORKERS at a time; `alone` (marked `// suite: alone`: files that keep both
// cores busy themselves, or judge the client's own stamps at the millisecond) runs last, one file
// at a time. `npm run check` runs all four.
const byProject = testFilesByProject(fileURLToPath(new URL('.', import.meta.url)));

/** Files at a time from the environment's variable `name`, else `fallback`. */
const workers = (name: string, fallback: number): number => Math.max(1, Number(process.env[name] ?? fallback) || fallback);

/**
 * End-to-end files at a time. Run one at a time on the 2-core machine, almost every one kept only
 * 0.2–0.6 of one core busy on average, waiting on its runs' seconds (the machine's CPU sampled
 * every second through a clean-clone run, 2026-12-07): three at a time use about 1.4 cores.
 */
const E2E_WORKERS = workers('LOADFLEET_E2E_WORKERS', 3);

/** Timing files at a time: two, each 0.2–0.6 of a core on average (the same sampling). */
const TIMING_WORKERS = workers('LOADFLEET_TIMING_WORKERS', 2);

/** No single test may take longer than two minutes (the reporter names one that does); a soak sets its own. */
const E2E_TEST_TIMEOUT_MS = 120_000;

/** A project of test/ files that run real processes, `files` at a time. */
const processes = (name: 'e2e' | 'timing' | 'alone', groupOrder: number, files: number) => ({
  test: {
    name,
    sequence: { groupOrder },
    include: byProject[name],
    testTimeout: E2E_TEST_TIMEOUT_MS,
    hookTimeout: 60_000,
    maxWorkers: files,
    fileParallelism: files > 1,
  },
});

export default defineConfig({
  test: {
    reporters: ['default', './scripts/file-times-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          sequence: { groupOrder: 0 },
          include: byProject.unit,
          testTimeout: 20_000,
        },
      },
      processes('e2e', 1, E2E_WORKERS),
      processes('timing', 2, TIMING_WORKERS),
      // Last, with nothing beside it.
      processes('alone', 3, 1),
    ],
  },
});
