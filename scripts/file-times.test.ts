import { describe, expect, it } from 'vitest';
import { fileTimesTable } from './file-times.js';

describe('the per-file time table', () => {
  it('lists files slowest first, sums each project, and names a test over two minutes', () => {
    const lines = fileTimesTable(
      [
        {
          project: 'e2e',
          file: 'test/a.test.ts',
          ms: 12_300,
          tests: 2,
          failed: false,
          slowest: { name: 'a > one', ms: 9_000 },
          startedMs: 1_000,
          endedMs: 13_300,
        },
        { project: 'e2e', file: 'test/c.test.ts', ms: 5_000, tests: 1, failed: false, startedMs: 2_000, endedMs: 7_000 },
        {
          project: 'timing',
          file: 'test/soak.test.ts',
          ms: 130_000,
          tests: 1,
          failed: true,
          slowest: { name: 'soak > round', ms: 125_000 },
          failures: [{ name: 'soak > round', error: 'expected 3 to be 4' }],
        },
        { project: 'unit', file: 'shared/b.test.ts', ms: 400, tests: 5, failed: false, slowest: { name: 'b > x', ms: 100 } },
      ],
      150_000,
    );
    expect(lines[0]).toBe('per-file times, slowest first (s; 4 files, 150.0 s wall):');
    expect(lines[1]).toBe('  130.0  timing  test/soak.test.ts  FAILED');
    expect(lines[2]).toBe('   12.3  e2e     test/a.test.ts  (slowest test 9.0 s)');
    expect(lines[3]).toBe('    5.0  e2e     test/c.test.ts');
    expect(lines[4]).toContain('shared/b.test.ts');
    // Two e2e files side by side: 17.3 s of files in 12.3 s.
    expect(lines[5]).toBe('per project, files summed: timing 130.0 s; e2e 17.3 s in 12.3 s wall; unit 0.4 s');
    expect(lines[6]).toBe('over 120 s: test/soak.test.ts > soak > round (125.0 s)');
    // Failures last: the end of a long log is all a CI page may keep.
    expect(lines[7]).toBe('failed: 1 file');
    expect(lines[8]).toBe('FAILED timing test/soak.test.ts > soak > round: expected 3 to be 4');
    expect(lines).toHaveLength(9);
  });
});
