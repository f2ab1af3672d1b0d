import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { testFilesByProject } from './scripts/test-projects.js';

// Three projects, split by rule (scripts/test-projects.ts, docs/testing.md): `unit` (every test
// beside the code, and test/ files marked `// suite: contract`) is `npm test`; `e2e` (test/ files
// running real processes) runs one file at a time, or LOADFLEET_E2E_WORKERS at a time; `timing`
// (test/ files marked `// suite: timing`) runs one file at a time, after the others, since its
// assertions are on times a neighbour's load would move. `npm run check` runs all three.
const byProject = testFilesByProject(fileURLToPath(new URL('.', import.meta.url)));

/**
 * End-to-end files at a time. One by default: two at a time on the 2-core machine saved 10 minutes
 * but moved millisecond assertions in files not marked timing (a reasoning gap, a hand-over's
 * exit) in one clean-clone run of two (2026-12-07).
 */
const E2E_WORKERS = Math.max(1, Number(process.env.LOADFLEET_E2E_WORKERS ?? 1) || 1);

/** No single test may take longer than two minutes (the reporter names one that does); a soak sets its own. */
const E2E_TEST_TIMEOUT_MS = 120_000;

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
      {
        test: {
          name: 'e2e',
          sequence: { groupOrder: 1 },
          include: byProject.e2e,
          testTimeout: E2E_TEST_TIMEOUT_MS,
          hookTimeout: 60_000,
          maxWorkers: E2E_WORKERS,
          fileParallelism: E2E_WORKERS > 1,
        },
      },
      {
        test: {
          name: 'timing',
          // Alone, after the rest: these measure timing on 2 cores.
          sequence: { groupOrder: 2 },
          include: byProject.timing,
          testTimeout: E2E_TEST_TIMEOUT_MS,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
