import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { testFilesByProject } from './scripts/test-projects.js';

// Three projects, split by rule (scripts/test-projects.ts, docs/testing.md): `unit` (every test
// beside the code, and test/ files marked `// suite: contract`) is `npm test`; `e2e` (test/ files
// running real processes) runs two files at a time; `timing` (test/ files marked `// suite:
// timing`) runs one file at a time, after the others, since its assertions are on times a
// neighbour's load would move. `npm run check` runs all three.
const byProject = testFilesByProject(fileURLToPath(new URL('.', import.meta.url)));

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
          maxWorkers: 2,
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
