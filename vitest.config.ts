import { defineConfig } from 'vitest/config';

// Two projects: `unit` (pure modules, beside the code) and `e2e` (real processes on loopback).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['shared/**/*.test.ts', 'agent/**/*.test.ts', 'coordinator/**/*.test.ts', 'sim/**/*.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
