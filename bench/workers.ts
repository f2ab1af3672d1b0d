// workers: chunks per second with `agent --workers 1|2`. The agent has no worker threads yet, so
// this reports that instead of a figure that would not mean what its name says.
import type { Suite, SuiteResult } from './suite.js';

/** The workers suite (not measurable until `agent --workers` exists). */
export const workers: Suite = {
  name: 'workers',
  run: (): Promise<SuiteResult> =>
    Promise.resolve({
      figures: { not_built: 'agent --workers is not implemented yet' },
      table: [{ figure: 'chunks/s with --workers 1|2', value: 'not built', goal: 'near-linear' }],
    }),
};
