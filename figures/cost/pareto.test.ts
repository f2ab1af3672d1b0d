import { describe, expect, it } from 'vitest';
import { dominates, nonDominated, paretoOf } from './pareto.js';

describe('Pareto front', () => {
  it('keeps exactly the non-dominated points of a hand-made set, by x ascending', () => {
    // a, e, c, f trade x for y; b is beaten by e (same y, more x) and d by b and e.
    const pts = [
      { x: 10, y: 100 }, // a
      { x: 15, y: 80 }, // b: dominated by e
      { x: 30, y: 60 }, // c
      { x: 15, y: 50 }, // d
      { x: 20, y: 80 }, // e
      { x: 40, y: 10 }, // f
    ];
    expect(nonDominated(pts)).toEqual([0, 4, 2, 5]);
    expect(dominates(pts[4]!, pts[1]!)).toBe(true);
    expect(dominates(pts[1]!, pts[1]!)).toBe(false);
  });

  it('keeps equal points both, and a single point alone', () => {
    expect(
      nonDominated([
        { x: 1, y: 1 },
        { x: 1, y: 1 },
        { x: 0.5, y: 0.5 },
      ]),
    ).toEqual([0, 1]);
    expect(nonDominated([{ x: 3, y: 4 }])).toEqual([0]);
    expect(nonDominated([])).toEqual([]);
  });

  it('computes the SLO front over the points that met the SLO, and lists what it cannot plot', () => {
    const p = paretoOf(
      [
        { label: 'low', x: 100, y: 20, meets_slo: true },
        { label: 'mid', x: 80, y: 50, meets_slo: true },
        { label: 'high', x: 30, y: 90, meets_slo: false },
        { label: 'worse', x: 70, y: 40, meets_slo: true },
        { label: 'none', x: null, y: 10, meets_slo: false },
        { label: 'client', x: 50, y: 50, meets_slo: null, excluded: 'client-limited' },
      ],
      { x: 'output_tok_s_per_user', y: 'output_tok_s_per_accelerator' },
    );
    expect(p.front).toEqual(['high', 'mid', 'low']);
    expect(p.slo_front).toEqual(['mid', 'low']);
    expect(p.points.find((q) => q.label === 'worse')).toMatchObject({ on_front: false, on_slo_front: false });
    expect(p.points.find((q) => q.label === 'high')).toMatchObject({ on_front: true, on_slo_front: false });
    expect(p.not_plotted).toEqual([
      { label: 'none', reason: 'no output_tok_s_per_user' },
      { label: 'client', reason: 'client-limited' },
    ]);
  });
});
