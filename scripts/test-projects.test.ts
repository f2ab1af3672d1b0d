import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { projectOf, testFilesByProject } from './test-projects.js';

describe('which project a test file runs in', () => {
  it('beside the code: unit, whatever its header says', () => {
    expect(projectOf('coordinator/run.test.ts', '// suite: timing\n')).toBe('unit');
    expect(projectOf('results/figures.test.ts', '')).toBe('unit');
  });

  it('in test/: e2e unless its leading comment lines mark it contract, timing or alone', () => {
    expect(projectOf('test/x.test.ts', "// A run end to end.\nimport { it } from 'vitest';\n")).toBe('e2e');
    expect(projectOf('test/x.test.ts', '// suite: contract\n// Layout rules.\n')).toBe('unit');
    expect(projectOf('test/x.test.ts', '// Clocks, end to end.\n// suite: timing\nimport x from "y";\n')).toBe('timing');
    expect(projectOf('test/x.test.ts', '// suite: alone\n// The benchmarks.\n')).toBe('alone');
  });

  it('a marker after the header (in a string, or a later comment) does not move a file', () => {
    expect(projectOf('test/x.test.ts', "import { it } from 'vitest';\n// suite: timing\n")).toBe('e2e');
    expect(projectOf('test/x.test.ts', '// A note.\n\n// suite: timing\n')).toBe('e2e');
    expect(projectOf('test/x.test.ts', '// suite: timing, mostly\n')).toBe('e2e');
  });

  it("this repository's files: each in one project, the contract checks and the clock tests where the suite needs them", () => {
    const by = testFilesByProject(fileURLToPath(new URL('..', import.meta.url)));
    const all = [...by.unit, ...by.e2e, ...by.timing, ...by.alone];
    expect(new Set(all).size).toBe(all.length);
    expect(by.unit).toContain('test/layout.test.ts');
    expect(by.unit).toContain('scripts/test-projects.test.ts');
    expect(by.unit.some((f) => f.startsWith('results/'))).toBe(true);
    expect(by.timing).toContain('test/drift.test.ts');
    expect(by.e2e).toContain('test/examples.test.ts');
    expect(by.alone).toContain('test/bench.test.ts');
    expect(all.some((f) => f.includes('node_modules/') || f.startsWith('dist/'))).toBe(false);
  });
});
