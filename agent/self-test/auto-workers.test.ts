import { describe, expect, it } from 'vitest';
import type { SelfTestFigures } from '../../shared/self-test.js';
import { autoWorkers, workersFor } from './auto-workers.js';

describe('--workers auto', () => {
  it('takes one thread per free core, none below two free cores', () => {
    expect([0, 0.5, 1, 1.9, 2, 3.7, 8, 200].map(workersFor)).toEqual([1, 1, 1, 1, 2, 3, 8, 64]);
  });

  it("uses the self-test's free cores when this process measured them, else measures now", () => {
    const f = { source: 'measured', free_cores: 4 } as SelfTestFigures;
    expect(autoWorkers(f, () => 0)).toEqual({ workers: 4, free: 4 });
    expect(autoWorkers({ ...f, source: 'cached' }, () => 2.5)).toEqual({ workers: 2, free: 2.5 });
    expect(autoWorkers(null, () => 6)).toEqual({ workers: 6, free: 6 });
  });

  it('shares the free cores among the agents one process serves (a packed local layout)', () => {
    expect(autoWorkers(null, () => 8, 4)).toEqual({ workers: 2, free: 8 });
    expect(autoWorkers(null, () => 6, 4)).toEqual({ workers: 1, free: 6 });
  });
});
