import { defineConfig } from 'vitest/config';

// Two projects: `unit` (pure modules, beside the code) and `e2e` (real processes on loopback).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          sequence: { groupOrder: 0 },
          include: [
            'shared/**/*.test.ts',
            'agent/**/*.test.ts',
            'coordinator/**/*.test.ts',
            'results/**/*.test.ts',
            'figures/**/*.test.ts',
            'sim/**/*.test.ts',
          ],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'e2e',
          // After the unit tests, not beside them: the e2e tests measure timing on 2 cores.
          sequence: { groupOrder: 1 },
          include: ['test/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
