// Run order and resume bookkeeping of an experiment directory.
import { describe, expect, it } from 'vitest';
import type { Experiment } from '../shared/experiment.js';
import { isFinished, slots } from './experiment-record.js';

const base = { repeats: 2, arms: [{ name: 'A' }, { name: 'B' }] } as Pick<Experiment, 'repeats' | 'arms'>;

describe('experiment run order', () => {
  it('interleaved: repeat 1 of every arm, then repeat 2', () => {
    expect(slots({ ...base, order: 'interleaved' } as Experiment).map((s) => `${s.arm}${s.repeat}`)).toEqual(['A1', 'B1', 'A2', 'B2']);
  });
  it('blocked: every repeat of an arm, then the next arm', () => {
    expect(slots({ ...base, order: 'blocked' } as Experiment).map((s) => `${s.arm}${s.repeat}`)).toEqual(['A1', 'A2', 'B1', 'B2']);
  });
  it('only completed and degraded runs count as finished (a resume redoes the rest)', () => {
    const entry = { arm: 'A', repeat: 1, run_dir: null, status_reason: null, started_at: null, finished_at: null, aborted_attempts: [] };
    expect(
      ['pending', 'running', 'completed', 'degraded', 'aborted'].filter((status) => isFinished({ ...entry, status } as never)),
    ).toEqual(['completed', 'degraded']);
  });
});
