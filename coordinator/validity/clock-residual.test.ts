import { describe, expect, it } from 'vitest';
import { clockResidual } from './data-quality.js';
import type { ValidityInput } from './types.js';

const base = { clockToleranceNs: 2e6 } as ValidityInput;

describe('clock_residual', () => {
  it('passes within the tolerance plus the measurement uncertainty, fails beyond it, naming the agent', () => {
    const ok = clockResidual({ ...base, clockResiduals: [{ agentId: 'fast', residualMaxNs: 2.1e6, uncertaintyNs: 0.2e6 }] });
    expect(ok.status).toBe('pass');
    const bad = clockResidual({
      ...base,
      clockResiduals: [
        { agentId: 'fast', residualMaxNs: 2.5e6, uncertaintyNs: 0.2e6 },
        { agentId: 'steady', residualMaxNs: 0.1e6, uncertaintyNs: 0.1e6 },
      ],
    });
    expect(bad.status).toBe('fail');
    expect(bad.reason).toBe('fast: residual 2.500 ms (± 0.200 ms) > 2.000 ms');
    expect(bad.evidence).toMatchObject({ tolerance_ms: 2, agents: { fast: { residual_max_ms: 2.5, uncertainty_ms: 0.2 } } });
  });

  it('fails an agent that left its declared common clock domain during the run, saying so', () => {
    const c = clockResidual({
      ...base,
      clockResiduals: [
        { agentId: 'a1', residualMaxNs: 0, uncertaintyNs: 0.1e6, basis: 'declared-domain' },
        { agentId: 'a2', residualMaxNs: 7.5e6, uncertaintyNs: 0.1e6, basis: 'declared-domain' },
      ],
    });
    expect(c.status).toBe('fail');
    expect(c.reason).toBe('a2: residual 7.500 ms (± 0.100 ms) > 2.000 ms from its declared clock domain');
    expect(c.evidence).toMatchObject({ agents: { a2: { basis: 'declared-domain' } } });
  });

  it('is not evaluated when no agent was steered long enough to judge', () => {
    const c = clockResidual({ ...base, clockResiduals: [{ agentId: 'fast', residualMaxNs: null, uncertaintyNs: 1e5 }] });
    expect(c.status).toBe('not_evaluated');
  });
});
