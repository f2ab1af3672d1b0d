import { describe, expect, it } from 'vitest';
import { byArm } from './aggregate.js';
import { armVerdictLines, armVerdicts } from './arm-slo.js';
import { runRow } from './rows.js';

const compare = { metric: 'realtime_all_p95_ttft_ms', baseline: 'alone', treatment: 'with batch' };

function run(verdict: string | null, p95: number): unknown {
  return {
    plan: { classes: [{ name: 'realtime' }] },
    classes: {
      realtime: {
        ...(verdict && { slo_verdict: { verdict, missed_in: [], windows: {} } }),
        windows: { all: { ttft_p95_ms: p95, requests: 10 } },
      },
    },
  };
}

describe('the SLO verdict per arm', () => {
  it('is met only when every run met it, missed when any run missed it', () => {
    const rows = [
      runRow(run('met', 180), 'r1', { arm: 'alone', repeat: 1 }, ['realtime'], []),
      runRow(run('met', 190), 'r2', { arm: 'alone', repeat: 2 }, ['realtime'], []),
      runRow(run('met', 9000), 'r3', { arm: 'with batch', repeat: 1 }, ['realtime'], []),
      runRow(run('missed', 10_400), 'r4', { arm: 'with batch', repeat: 2 }, ['realtime'], []),
    ];
    expect(rows[0]!.realtime_slo_verdict).toBe('met');
    const arms = byArm(rows, ['alone', 'with batch'], compare, 1.5);
    expect(arms.alone!.slo_verdict).toEqual({ realtime: { verdict: 'met', runs_met: 2, runs_missed: 0, runs_not_evaluable: 0 } });
    expect(arms['with batch']!.slo_verdict).toEqual({
      realtime: { verdict: 'missed', runs_met: 1, runs_missed: 1, runs_not_evaluable: 0 },
    });
    // The verdict column is not a figure: no {median, min, max} of it.
    expect(arms.alone!.realtime_slo_verdict).toBeUndefined();
    expect(armVerdictLines(arms as Record<string, Record<string, unknown>>)).toEqual([
      '  alone: realtime SLO met in all 2 runs',
      '  with batch: realtime SLO MISSED in 1 of 2 runs',
    ]);
  });

  it('is not evaluable when a run could not be judged, and absent when no run has a verdict', () => {
    expect(
      armVerdicts([
        { arm: 'a', realtime_slo_verdict: 'met' },
        { arm: 'a', realtime_slo_verdict: 'not_evaluable' },
      ]),
    ).toEqual({
      realtime: { verdict: 'not_evaluable', runs_met: 1, runs_missed: 0, runs_not_evaluable: 1 },
    });
    const rows = [runRow(run(null, 180), 'r1', { arm: 'alone', repeat: 1 }, ['realtime'], [])];
    expect(byArm(rows, ['alone'], compare, 1.5).alone!.slo_verdict).toBeUndefined();
  });
});
