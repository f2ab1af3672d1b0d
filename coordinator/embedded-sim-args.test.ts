import { describe, expect, it } from 'vitest';
import type { Plan } from '../shared/plan.js';
import { embeddedSimArgs } from './plan.js';

const plan = (model: 'poisson' | 'trace' | 'sessions'): Plan => ({
  schema: 'loadfleet.plan/v1',
  name: 'p',
  seed: 1,
  duration_s: 1,
  classes: [{ name: 'c', prompt: {}, load: { model, phases: [] } }],
});

describe('embedded engine-sim flags', () => {
  it('turn prefix caching on for traces and sessions only, once', () => {
    expect(embeddedSimArgs(plan('poisson'), ['--gateway'])).toEqual(['--gateway']);
    expect(embeddedSimArgs(plan('trace'), ['--gateway'])).toEqual(['--gateway', '--enable-prefix-caching']);
    expect(embeddedSimArgs(plan('sessions'), ['--enable-prefix-caching'])).toEqual(['--enable-prefix-caching']);
  });

  it('serve the LoRA adapters the classes name, unless the user chose', () => {
    const lora: Plan = {
      ...plan('poisson'),
      classes: [
        { name: 'a', prompt: {}, load: { model: 'poisson', phases: [] }, adapters: [{ model: 'sql', weight: 1 }] },
        {
          name: 'b',
          prompt: {},
          load: { model: 'poisson', phases: [] },
          adapters: [
            { model: 'code', weight: 1 },
            { model: 'sql', weight: 2 },
          ],
        },
      ],
    };
    expect(embeddedSimArgs(lora, ['--gateway'])).toEqual(['--gateway', '--lora-modules', 'sql,code']);
    expect(embeddedSimArgs(lora, ['--lora-modules=x'])).toEqual(['--lora-modules=x']);
  });

  it("send the server's spans to the run's receiver when the plan has traces, unless the user chose", () => {
    const url = 'http://127.0.0.1:43181/v1/traces';
    expect(embeddedSimArgs(plan('poisson'), [], url)).toEqual([]);
    const traced: Plan = { ...plan('poisson'), traces: {} };
    expect(embeddedSimArgs(traced, ['--gateway'], url)).toEqual(['--gateway', '--otlp-traces-endpoint', url]);
    expect(embeddedSimArgs(traced, ['--otlp-traces-endpoint=http://x:4318/v1/traces'], url)).toEqual([
      '--otlp-traces-endpoint=http://x:4318/v1/traces',
    ]);
  });
});
