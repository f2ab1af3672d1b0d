import { describe, expect, it } from 'vitest';
import { trafficByClass } from './traffic-series.js';

describe('traffic per class from traffic.csv', () => {
  it('splits by class, keeps open and closed loop apart, plots at the middle of each second', () => {
    const csv = [
      'elapsed_s,class,target_rate_per_s,target_concurrency,issued,completed,outstanding,schedule_lag_p99_ms',
      '0,realtime,0,,0,0,0,',
      '0,batch,5,,5,0,5,56.312',
      '1,realtime,2,,1,1,0,0.2',
      '1,batch,4,,4,2,7,0.231',
      '0,chat,,8,8,0,8,',
    ].join('\n');
    const t = trafficByClass(csv);
    expect(t.map((c) => [c.cls, c.closedLoop])).toEqual([
      ['realtime', false],
      ['batch', false],
      ['chat', true],
    ]);
    expect(t[1]!.target).toEqual([
      [0.5, 5],
      [1.5, 4],
    ]);
    expect(t[0]!.issued).toEqual([
      [0.5, 0],
      [1.5, 1],
    ]);
    expect(t[1]!.completed.at(-1)).toEqual([1.5, 2]);
    expect(t[2]!.target).toEqual([[0.5, 8]]);
    expect(t[2]!.outstanding).toEqual([[0.5, 8]]);
  });
});
