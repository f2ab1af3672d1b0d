import { describe, expect, it } from 'vitest';
import { summarizeResiduals } from '../../coordinator/clock/held-out.js';
import type { ResidualSummary } from '../clock-types.js';
import { clockResidual } from './clock-residual.js';
import type { ValidityInput } from './types.js';

const base = { clockToleranceNs: 2e6 } as ValidityInput;
// Held-out residuals (ms) each with a 0.1 ms bound, one a second from t = 3 s.
const held = (...ms: number[]): ResidualSummary =>
  summarizeResiduals(
    ms.map((m, i) => ({ t_s: 3 + 4 * i, residual_ns: Math.round(m * 1e6), bound_ns: 100_000 })),
    2e6,
  );

describe('clock_residual', () => {
  it('passes a steered agent whose held-out probes stay within the tolerance; fails one that any probe proves beyond it, naming when', () => {
    const ok = clockResidual({
      ...base,
      clockResiduals: [{ agentId: 'fast', residualMaxNs: 2.05e6, uncertaintyNs: 0.2e6, heldOut: held(0.2, -2.05, 0.4) }],
    });
    // 2.05 ms measured ± 0.1 ms: not proven beyond 2 ms.
    expect(ok.status).toBe('pass');
    expect(ok.evidence).toMatchObject({ agents: { fast: { heldout_probes: 3, residual_max_ms: 2.05, proven_max_ms: 1.95 } } });
    const bad = clockResidual({
      ...base,
      clockResiduals: [
        { agentId: 'fast', residualMaxNs: 2.5e6, uncertaintyNs: 0.2e6, heldOut: held(0.2, 2.5, 0.4) },
        { agentId: 'other', residualMaxNs: 0.1e6, uncertaintyNs: 0.1e6, heldOut: held(0.1, 0.1) },
      ],
    });
    expect(bad.status).toBe('fail');
    expect(bad.reason).toBe('fast: a held-out probe at t=7 s measured its run timeline at least 2.400 ms off (> 2.000 ms)');
  });

  it('is not evaluated when the held-out probes were too stalled to tell, or there were none', () => {
    const stalled = summarizeResiduals(
      [1, 2, 3].map((i) => ({ t_s: i, residual_ns: 0.5e6, bound_ns: i === 1 ? 0.1e6 : 3e6 })),
      2e6,
    );
    const c = clockResidual({ ...base, clockResiduals: [{ agentId: 'fast', residualMaxNs: 0.5e6, uncertaintyNs: 1e5, heldOut: stalled }] });
    expect(c.status).toBe('not_evaluated');
    expect(c.reason).toMatch(/only 1 of 3 held-out probes were precise enough/);
    const none = clockResidual({
      ...base,
      clockResiduals: [{ agentId: 'fast', residualMaxNs: null, uncertaintyNs: 1e5, heldOut: held() }],
    });
    expect(none.status).toBe('not_evaluated');
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
});
