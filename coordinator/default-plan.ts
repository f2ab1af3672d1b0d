// The main job: `coordinator start --agents 8` with no plan runs the short batch-interference
// plan (the seed experiment's shape in 60 s) against the embedded engine-sim in gateway mode, so
// a laptop shows what batch work already running does to realtime traffic.
import { fileURLToPath } from 'node:url';

/** The built-in plan (examples/batch-interference-short.plan.json). */
export const DEFAULT_PLAN_FILE = fileURLToPath(new URL('../../examples/batch-interference-short.plan.json', import.meta.url));

/** The embedded engine-sim is a vLLM replica behind a flow-control gateway; user --sim-arg flags follow. */
export const EMBEDDED_SIM_ARGS: readonly string[] = ['--gateway'];
