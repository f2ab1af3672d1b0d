// The simulator's settings, shared by the CLI and `startSim()`: one set of defaults and one
// validation that reports every problem at once.
import { type FaultRates, faultRateProblems } from './faults.js';

/** Settings for one simulated server; every field is optional and falls back to SIM_DEFAULTS. */
export interface SimOptions {
  /** Interface to listen on. */
  host?: string;
  /** TCP port; 0 picks a free one. */
  port?: number;
  /** The one model name served; requests naming another get 404. */
  model?: string;
  /** Fixed time from admission to the first token, before prefill. */
  ttftMs?: number;
  /** Time between engine steps, i.e. between a stream's tokens. */
  itlMs?: number;
  /** Extra time to first token per prompt token. */
  prefillUsPerToken?: number;
  /** Requests generating at once; the rest wait FCFS. */
  maxConcurrency?: number;
  /** Longest accepted prompt, in tokens. */
  maxModelLen?: number;
  /** Leading output tokens sent as `delta.reasoning_content` (chat only). */
  reasoningTokens?: number;
  /** Probability of each fault per request. */
  faults?: FaultRates;
  /** Length of the one pause a `stall` fault inserts. */
  stallMs?: number;
  /** Seed of the fault PRNG. */
  faultSeed?: number;
  /** Honour the `x-sim-fault` request header. */
  allowFaultHeader?: boolean;
}

/** SimOptions with every field present. */
export type ResolvedSimOptions = Required<SimOptions>;

/** Defaults for every setting. */
export const SIM_DEFAULTS: ResolvedSimOptions = {
  host: '127.0.0.1',
  port: 0,
  model: 'loadfleet-sim',
  ttftMs: 40,
  itlMs: 8,
  prefillUsPerToken: 2,
  maxConcurrency: 256,
  maxModelLen: 32768,
  reasoningTokens: 0,
  faults: {},
  stallMs: 500,
  faultSeed: 1,
  allowFaultHeader: false,
};

/** Thrown for invalid settings; `problems` lists each one as `field: what is wrong`. */
export class SimOptionsError extends Error {
  /** Every problem found. */
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(`invalid engine-sim options: ${problems.join('; ')}`);
    this.name = 'SimOptionsError';
    this.problems = problems;
  }
}

type NumberRule = [field: keyof ResolvedSimOptions, min: number, integer: boolean, max?: number];

// itlMs must be positive: a zero step period would spin the event loop.
const NUMBER_RULES: NumberRule[] = [
  ['port', 0, true, 65535],
  ['ttftMs', 0, false],
  ['itlMs', 0.1, false],
  ['prefillUsPerToken', 0, false],
  ['maxConcurrency', 1, true],
  ['maxModelLen', 1, true],
  ['reasoningTokens', 0, true],
  ['stallMs', 0, false],
  ['faultSeed', 0, true, 0xffffffff],
];

/** Fills defaults and validates; throws SimOptionsError listing every problem. */
export function resolveSimOptions(input: SimOptions = {}): ResolvedSimOptions {
  const defined = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  const options: ResolvedSimOptions = { ...SIM_DEFAULTS, ...defined };
  const problems: string[] = [];
  for (const [field, min, integer, max] of NUMBER_RULES) {
    const value = options[field];
    const ok =
      typeof value === 'number' && value >= min && value <= (max ?? Number.MAX_SAFE_INTEGER) && (!integer || Number.isInteger(value));
    if (!ok)
      problems.push(`${field}: expected ${integer ? 'an integer' : 'a number'} >= ${min}${max === undefined ? '' : ` and <= ${max}`}`);
  }
  if (typeof options.host !== 'string' || options.host === '') problems.push('host: expected a non-empty string');
  if (typeof options.model !== 'string' || options.model === '') problems.push('model: expected a non-empty string');
  problems.push(...faultRateProblems(options.faults));
  if (problems.length > 0) throw new SimOptionsError(problems);
  return options;
}
