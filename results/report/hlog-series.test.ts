import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HlogWriter } from '../../coordinator/file-writers/hlog.js';
import { encodeHistogram, newHistogram, recordNs } from '../../shared/histogram.js';
import { hlogHeader, metricIntervals } from './hlog-series.js';

function histogramOfMs(values: number[]) {
  const h = newHistogram();
  for (const v of values) recordNs(h, v * 1e6);
  return h;
}

describe('percentiles over time from histograms.hlog', () => {
  it('reads back what the run writer wrote, with nearest-rank percentiles', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'lf-hlog-')), 'histograms.hlog');
    const w = new HlogWriter(path, 1_796_236_324_159_000_000n);
    // 1..100 ms: nearest-rank p50 = 50 ms, p95 = 95 ms.
    w.interval('realtime/ttft', 3, 1, histogramOfMs(Array.from({ length: 100 }, (_, i) => i + 1)));
    w.interval('realtime/schedule_lag', 3, 1, histogramOfMs([1, 2]));
    w.interval('batch/ttft', 4, 1, histogramOfMs([2000, 4000, 8000]));
    w.interval('realtime/ttft', 4, 1, histogramOfMs([120]));
    w.interval('realtime/ttft', 5, 1, newHistogram());
    await w.close();
    const text = readFileSync(path, 'utf8');
    expect(hlogHeader(text).baseTimeS).toBe(1796236324.159);
    const m = metricIntervals(text, 'ttft', [0.5, 0.95]);
    expect([...m.keys()].sort()).toEqual(['batch', 'realtime']);
    const rt = m.get('realtime')!;
    expect(rt.map((iv) => [iv.startS, iv.count])).toEqual([
      [3, 100],
      [4, 1],
    ]);
    // HDR buckets at 3 significant digits: within 0.05% of the exact values.
    expect(rt[0]!.valuesMs[0]).toBeCloseTo(50, 1);
    expect(rt[0]!.valuesMs[1]).toBeCloseTo(95, 1);
    expect(rt[1]!.valuesMs[1]! / 120).toBeCloseTo(1, 3);
    const b = m.get('batch')![0]!;
    expect(b.valuesMs[0]! / 4000).toBeCloseTo(1, 3);
    expect(b.valuesMs[1]! / 8000).toBeCloseTo(1, 3);
  });

  it('takes timestamps as absolute when the log has no BaseTime line', () => {
    const text = [
      '#[StartTime: 1000.000 (seconds since epoch)]',
      `Tag=a/ttft,1002.000,1.000,5.000,${encodeHistogram(histogramOfMs([5]))}`,
    ].join('\n');
    expect(metricIntervals(text, 'ttft', [0.5]).get('a')![0]!.startS).toBe(2);
  });
});
