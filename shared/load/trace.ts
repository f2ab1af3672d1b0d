// trace: a production trace replayed row by row (plan `load.trace`). The coordinator reads the
// file into plan.inputs (workload-files.ts); each row's intended time is its scaled trace time,
// and its index in the replayed slice is its request_index, so splitting is the usual stripe.
import type { TraceRow } from '../plan.js';
import type { LoadModel } from './model.js';

/** Rows are arrivals: the model has no phases to draw from. */
export const trace: LoadModel = {
  closedLoop: false,
  replay(rows: readonly TraceRow[]): number[] {
    return rows.map((r) => r.at_ns);
  },
};
