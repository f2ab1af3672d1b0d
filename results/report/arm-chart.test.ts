import { describe, expect, it } from 'vitest';
import { renderArmChart } from './arm-chart.js';

const ARMS = [
  {
    arm: 'alone',
    median: 133.395,
    min: 132.576,
    max: 137.017,
    repeats: [137.017, 133.395, 132.576].map((value, i) => ({ label: `repeat ${i + 1}`, value })),
  },
  {
    arm: 'with batch',
    median: 15378.459,
    min: 15168.291,
    max: 15919.173,
    repeats: [15378.459, 15919.173, 15168.291].map((value, i) => ({ label: `repeat ${i + 1}`, value })),
  },
];
const BASE = { id: 'cmp', title: 't', definition: 'd', valueLabel: 'p95 TTFT (ms)', unit: 'ms', emptyMessage: 'none' };

function cx(html: string, arm: string): number[] {
  const g = html.split('<g class="arm"').find((part) => part.startsWith(` data-arm="${arm}"`))!;
  return [...g.matchAll(/<circle class="repeat" cx="([\d.]+)"/g)].map((m) => Number(m[1]));
}

describe('arm chart', () => {
  it('draws a dot per repeat, a median bar and a whisker per arm, on a log axis when arms are >20× apart', () => {
    const html = renderArmChart({ ...BASE, arms: ARMS });
    expect((html.match(/<circle class="repeat"/g) ?? []).length).toBe(6);
    expect((html.match(/class="median"/g) ?? []).length).toBe(2);
    expect((html.match(/class="whisker"/g) ?? []).length).toBe(2);
    expect(html).toContain('p95 TTFT (ms) — log scale');
    expect(html).toContain('median 15,378 ms (min 15,168, max 15,919), 3 repeats');
    expect(html).toContain('<title>with batch, repeat 2: 15,919 ms</title>');
    // Order on the axis follows the values.
    const a = cx(html, 'alone');
    const b = cx(html, 'with batch');
    expect(Math.max(...a)).toBeLessThan(Math.min(...b));
    expect(b[1]).toBeGreaterThan(b[0]!);
    expect(b[2]).toBeLessThan(b[0]!);
  });

  it('stays linear from 0 when arms are close, and per-arm spreads each arm over its own axis', () => {
    const close = renderArmChart({ ...BASE, arms: [ARMS[0]!, { ...ARMS[0]!, arm: 'other' }] });
    expect(close).not.toContain('log scale');
    expect(close).toMatch(/>0<\/text>/);
    const perArm = renderArmChart({ ...BASE, arms: ARMS, axis: 'per-arm' });
    expect(perArm).toContain('each arm on its own scale');
    const a = cx(perArm, 'alone');
    const b = cx(perArm, 'with batch');
    // Each arm's own axis spreads its repeats over a good part of the width.
    expect(Math.max(...a) - Math.min(...a)).toBeGreaterThan(300);
    expect(Math.max(...b) - Math.min(...b)).toBeGreaterThan(300);
  });

  it('a chart with no value says so', () => {
    expect(renderArmChart({ ...BASE, arms: [{ arm: 'x', median: null, min: null, max: null, repeats: [] }] })).toContain(
      '<p class="no-data">none</p>',
    );
  });
});
