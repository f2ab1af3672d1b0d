// A new SLO percentile is one row of the SLO table (shared/slo-table.ts): with a test-only table of
// two more rows (p90 TTFT, and p99.9 e2e, a quantile nothing reported before), a plan may declare
// them, the verdict judges them on exact ranks with failures ranked +∞, the report says them in
// words, and compare computes and gates their figures — with no other change.
import { describe, expect, it, vi } from 'vitest';
import { summarizeSorted } from '../figures/exact/rank-select.js';
import { classVerdict, criterionText, type VerdictWindowInput, verdictLine } from '../figures/slo-verdict.js';
import type { Slo } from '../shared/plan.js';
import { validatePlan } from '../shared/plan-validate.js';
import { sloFigure } from './compare/figure-keys.js';
import { compareRuns } from './compare/figures.js';
import { runOf, windowOf } from './compare/simulate.test-kit.js';
import { sloSection } from './report/slo-section.js';

vi.mock('../shared/slo-table.js', async (original) => {
  const real = await original<typeof import('../shared/slo-table.js')>();
  return {
    ...real,
    SLO_LATENCY_BOUNDS: [
      ...real.SLO_LATENCY_BOUNDS,
      { key: 'ttft_p90_ms', metric: 'ttft', quantile: 0.9, words: 'p90 TTFT', description: 'p90 TTFT, ms.' },
      { key: 'e2e_p99_9_ms', metric: 'e2e', quantile: 0.999, words: 'p99.9 e2e', description: 'p99.9 e2e, ms.' },
    ],
  };
});

// 1000 requests: TTFT i ms and e2e 10·i ms for request i = 1..1000, the last `failed` of them failed (+∞).
function window(failed: number): VerdictWindowInput {
  const ns = (scale: number) =>
    summarizeSorted(
      Float64Array.from({ length: 1000 }, (_, i) => (i >= 1000 - failed ? Number.POSITIVE_INFINITY : (i + 1) * scale * 1e6)),
    )!;
  return {
    requests: 1000,
    completed: 1000 - failed,
    failed,
    okWithoutFirstToken: 0,
    okUncountedOutput: 0,
    okOneToken: 0,
    verdictExact: new Map([
      ['ttft', ns(1)],
      ['e2e', ns(10)],
    ]),
  };
}

describe('an SLO table with a p90 TTFT and a p99.9 e2e row', () => {
  it('lets a plan declare them', () => {
    const plan = {
      schema: 'loadfleet.plan/v1',
      name: 'p',
      seed: 1,
      duration_s: 1,
      classes: [
        {
          name: 'rt',
          prompt: { input_tokens: 8, output_tokens: 8 },
          load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 1, rate_per_s: 1 }] },
          slo: { ttft_p90_ms: 950, e2e_p99_9_ms: 9990 },
        },
      ],
    };
    expect(validatePlan(plan)).toMatchObject({ ok: true });
    const typo = structuredClone(plan);
    (typo.classes[0]!.slo as Record<string, number>)['ttft_p91_ms'] = 1;
    expect(validatePlan(typo)).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/^classes\[0\]\.slo\.ttft_p91_ms: unknown key/)],
    });
  });

  it('judges each on its own exact nearest rank, failures ranked +∞', () => {
    const slo = { ttft_p90_ms: 899, e2e_p99_9_ms: 9990 } as unknown as Slo;
    const met = classVerdict(slo, new Map([['all', window(0)]]));
    // Rank ceil(0.9 · 1000) = 900 → 900 ms > 899; rank ceil(0.999 · 1000) = 999 → 9990 ms ≤ 9990.
    expect(met.windows['all']!.criteria.map((c) => [c.criterion, c.figure, c.met])).toEqual([
      ['ttft_p90_ms', 900, false],
      ['e2e_p99_9_ms', 9990, true],
    ]);
    expect(met.verdict).toBe('missed');
    expect(verdictLine('rt', met)).toBe('rt: SLO MISSED over the whole run — p90 TTFT 900 ms > 899 ms; p99.9 e2e 9,990 ms ≤ 9,990 ms');
    // Two failures of 1000 put the p99.9 on a failure (more than 1000 − 999 failed): missed on failure.
    const failing = classVerdict({ e2e_p99_9_ms: 1e9 } as unknown as Slo, new Map([['all', window(2)]]));
    expect(failing.windows['all']!.criteria[0]).toMatchObject({ criterion: 'e2e_p99_9_ms', figure: null, met: false, on_failure: true });
    expect(criterionText(failing.windows['all']!.criteria[0]!)).toBe('p99.9 e2e a failed request (2 of 1000 failed) > 1,000,000,000 ms');
    // The report's SLO section says the same words.
    const html = sloSection({ classes: { rt: { slo_verdict: met, windows: { all: {} } } } });
    expect(html).toContain('p90 TTFT 900 ms &gt; 899 ms');
  });

  it('makes compare compute and gate the new figures', () => {
    expect(sloFigure('ttft_p90_ms')).toBe('ttft_p90_ms');
    expect(sloFigure('e2e_p99_9_ms')).toBe('e2e_p99_9_ms');
    const side = (id: string, scale: number) => ({
      ...runOf(id, windowOf(Float64Array.from({ length: 2000 }, (_, i) => 100 * scale + (i % 100)))),
      sloFigures: { rt: ['ttft_p90_ms', 'e2e_p99_9_ms'] },
    });
    const c = compareRuns([side('a', 1)], [side('b', 3)], {
      confidence: 0.95,
      falseAlarm: 0.05,
      resamples: 200,
      relativeThreshold: 0.05,
      successThreshold: 0.01,
      seed: 't',
    });
    const figures = c.classes['rt']!['all']!;
    const p90 = figures.find((f) => f.figure === 'ttft_p90_ms')!;
    // Nearest rank 1800 of 2000: 100·scale + 89 (each of 0..99 appears 20 times).
    expect([p90.baseline, p90.candidate, p90.gating]).toEqual([189, 389, true]);
    const p999 = figures.find((f) => f.figure === 'e2e_p99_9_ms')!;
    expect([p999.baseline, p999.candidate, p999.gating]).toEqual([599, 799, true]);
    expect(c.gating).toEqual(expect.arrayContaining(['rt/all/ttft_p90_ms', 'rt/all/e2e_p99_9_ms']));
    expect(c.regressed).toEqual(expect.arrayContaining(['rt/all/ttft_p90_ms', 'rt/all/e2e_p99_9_ms']));
  });
});
