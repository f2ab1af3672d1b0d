import { describe, expect, it } from 'vitest';
import { renderLineChart } from './line-chart.js';

const BASE = {
  id: 'demo',
  title: 'Demo <chart>',
  definition: 'What is plotted & why.',
  xLabel: 'time since run start (s)',
  yLabel: 'TTFT (ms)',
  emptyMessage: 'nothing to draw',
};

function polylinePoints(svg: string): number[] {
  return [...svg.matchAll(/<polyline points="([^"]*)"/g)].map((m) => m[1]!.split(' ').length);
}

describe('line chart', () => {
  it('draws one polyline per series with every point, axes titles, legend and escaped text', () => {
    const html = renderLineChart({
      ...BASE,
      series: [
        {
          label: 'a p95',
          colour: '#000',
          points: [
            [0.5, 10],
            [1.5, 20],
            [2.5, 15],
          ],
        },
        {
          label: 'a p50',
          colour: '#000',
          dash: 'dashed',
          points: [
            [0.5, 5],
            [1.5, 8],
          ],
        },
      ],
      bands: [{ label: 'surge', fromX: 1, toX: 2 }],
      xDomain: [0, 3],
    });
    expect(polylinePoints(html)).toEqual([3, 2]);
    expect(html).toContain('data-chart="demo"');
    expect(html).toContain('Demo &lt;chart&gt;');
    expect(html).toContain('What is plotted &amp; why.');
    expect(html).toContain('time since run start (s)');
    expect(html).toContain('TTFT (ms)');
    expect(html).toContain('stroke-dasharray="7 4"');
    expect(html).toContain('>surge</text>');
    expect(html).toContain('plan windows (shaded)');
    expect((html.match(/<circle /g) ?? []).length).toBe(5);
  });

  it('places points by value: y = 0 on the x axis, the max at or below the top', () => {
    const html = renderLineChart({
      ...BASE,
      series: [
        {
          label: 's',
          colour: '#000',
          points: [
            [0, 0],
            [10, 100],
          ],
        },
      ],
      xDomain: [0, 10],
    });
    const pts = /<polyline points="([^"]*)"/
      .exec(html)![1]!
      .split(' ')
      .map((p) => p.split(',').map(Number));
    const axisY = Number(/<line class="axis" x1="72" x2="840" y1="([\d.]+)"/.exec(html)![1]);
    expect(pts[0]).toEqual([72, axisY]);
    expect(pts[1]![0]).toBe(840);
    expect(pts[1]![1]).toBeLessThan(axisY);
  });

  it('says why instead of drawing empty axes', () => {
    const html = renderLineChart({ ...BASE, series: [{ label: 's', colour: '#000', points: [] }] });
    expect(html).toContain('<p class="no-data">nothing to draw</p>');
    expect(html).not.toContain('<svg');
  });

  it('keeps a reference line inside the y range', () => {
    const html = renderLineChart({
      ...BASE,
      series: [{ label: 's', colour: '#000', points: [[0, 0.2]] }],
      refLines: [{ y: 1, label: '1.0 = pool full' }],
    });
    expect(html).toContain('1.0 = pool full');
    expect(html).toMatch(/>1<\/text>/);
  });
});
