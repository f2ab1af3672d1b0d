// The registry of load models, keyed by the plan's `load.model` string (= the file name).
import type { LoadModelName } from '../plan.js';
import { concurrency } from './concurrency.js';
import { constantRate } from './constant-rate.js';
import type { LoadModel } from './model.js';
import { poisson } from './poisson.js';
import { sessions } from './sessions.js';
import { trace } from './trace.js';

/** Every load model by its plan name. */
export const LOAD_MODELS: Record<LoadModelName, LoadModel> = {
  'constant-rate': constantRate,
  poisson,
  concurrency,
  trace,
  sessions,
};
