import { describe, expect, it } from 'vitest';
import type { Plan, TrafficClass } from './plan.js';
import { arrivalsBetween, buildSchedule, concurrencyAt } from './schedule.js';

function planWith(load: TrafficClass['load'], seed = 1, duration_s = 200): Plan {
  return {
    schema: 'loadfleet.plan/v1',
    name: 's',
    seed,
    duration_s,
    classes: [{ name: 'x', prompt: { input_tokens: 4, output_tokens: 2 }, load }],
  };
}

describe('global schedule', () => {
  it('is identical for the same seed and plan, and differs for another seed', () => {
    const load: TrafficClass['load'] = { model: 'poisson', phases: [{ start_s: 0, duration_s: 100, rate_per_s: 5 }] };
    const a = buildSchedule(planWith(load, 42));
    const b = buildSchedule(planWith(load, 42));
    const c = buildSchedule(planWith(load, 43));
    expect(a.sha256).toBe(b.sha256);
    expect(a.classes[0]!.arrivalsNs).toEqual(b.classes[0]!.arrivalsNs);
    expect(c.sha256).not.toBe(a.sha256);
  });

  it('holds the arrivals in a typed array of exactly their count, with the schedule hash of the array-built schedule', () => {
    const prompt = { input_tokens: 4, output_tokens: 2 };
    const plan: Plan = {
      ...planWith({ model: 'constant-rate', phases: [] }),
      classes: [
        // Phases out of order: they are drawn in time order.
        {
          name: 'x',
          prompt,
          load: {
            model: 'poisson',
            phases: [
              { start_s: 100, duration_s: 100, rate_per_s: 20 },
              { start_s: 0, duration_s: 100, rate_per_s: 5 },
            ],
          },
        },
        {
          name: 'y',
          prompt,
          load: {
            model: 'constant-rate',
            phases: [
              { start_s: 0, duration_s: 50, rate_per_s: 3.3 },
              { start_s: 50, duration_s: 150, rate_per_s: 1 },
            ],
          },
        },
      ],
    };
    const s = buildSchedule(plan);
    // Computed by the build before this one, which pushed every phase into a number array.
    expect(s.sha256).toBe('8faf63d8ff346ddc7fc9f7ed03ad5ff389847d1c66e63e3a9b92260671c96ff9');
    const t = s.classes[0]!.arrivalsNs;
    expect([t.length, s.classes[1]!.arrivalsNs.length]).toEqual([2569, 315]);
    expect(t.buffer.byteLength).toBe(t.length * 8);
    expect([t[0], t.at(-1)]).toEqual([354_183_305, 199_964_772_397]);
    for (let i = 1; i < t.length; i++) expect(t[i]!).toBeGreaterThanOrEqual(t[i - 1]!);
  });

  it('spaces constant-rate arrivals exactly from the phase start', () => {
    const s = buildSchedule(planWith({ model: 'constant-rate', phases: [{ start_s: 2, duration_s: 10, rate_per_s: 4 }] }));
    const t = s.classes[0]!.arrivalsNs;
    expect(t.length).toBe(40);
    expect(t[0]).toBe(2e9);
    expect(t[39]).toBe(2e9 + 39 * 250e6);
  });

  it('offers a homogeneous Poisson rate within 3% over 20,000 arrivals', () => {
    const s = buildSchedule(planWith({ model: 'poisson', phases: [{ start_s: 0, duration_s: 200, rate_per_s: 100 }] }));
    const n = s.classes[0]!.arrivalsNs.length;
    expect(Math.abs(n / 200 - 100)).toBeLessThan(3);
    const t = s.classes[0]!.arrivalsNs;
    for (let i = 1; i < t.length; i++) expect(t[i]!).toBeGreaterThanOrEqual(t[i - 1]!);
  });

  it('follows a noisy sinusoid: mean near the center, more arrivals at the crest than the trough', () => {
    const s = buildSchedule(
      planWith({
        model: 'poisson',
        phases: [{ start_s: 0, duration_s: 200, rate: { pattern: 'noisy-sinusoidal', center: 30, amplitude: 20, period_s: 40, noise: 1 } }],
      }),
    );
    const t = s.classes[0]!.arrivalsNs;
    expect(Math.abs(t.length / 200 - 30)).toBeLessThan(2);
    let crest = 0;
    let trough = 0;
    for (let k = 0; k < 5; k++) {
      crest += arrivalsBetween(t, (k * 40 + 5) * 1e9, (k * 40 + 15) * 1e9);
      trough += arrivalsBetween(t, (k * 40 + 25) * 1e9, (k * 40 + 35) * 1e9);
    }
    expect(crest).toBeGreaterThan(3 * trough);
  });

  it('ramps linearly', () => {
    const s = buildSchedule(
      planWith({ model: 'poisson', phases: [{ start_s: 0, duration_s: 100, rate: { pattern: 'ramp', from: 0, to: 40 } }] }),
    );
    const t = s.classes[0]!.arrivalsNs;
    expect(arrivalsBetween(t, 75e9, 100e9)).toBeGreaterThan(4 * arrivalsBetween(t, 0, 25e9));
  });

  it('turns closed-loop phases into concurrency steps that end at 0', () => {
    const s = buildSchedule(
      planWith({
        model: 'concurrency',
        phases: [
          { start_s: 1, duration_s: 4, concurrency: 8 },
          { start_s: 5, duration_s: 5, concurrency: 3 },
        ],
      }),
    );
    const steps = s.classes[0]!.concurrency;
    expect(steps).toEqual([
      { atNs: 1e9, value: 8 },
      { atNs: 5e9, value: 3 },
      { atNs: 10e9, value: 0 },
    ]);
    expect(concurrencyAt(steps, 0)).toBe(0);
    expect(concurrencyAt(steps, 4.9e9)).toBe(8);
    expect(concurrencyAt(steps, 11e9)).toBe(0);
  });
});
