// The simulator's settings, shared by the CLI and `startSim()`: one set of defaults and one
// validation that reports every problem at once.
import { type FaultRates, faultRateProblems } from './faults.js';
import { DEFAULT_PROFILE, PROFILES } from './profile.js';

/** The two engine models. */
export type EngineKind = 'vllm' | 'simple';

/** Settings for one simulated server; every field is optional and falls back to SIM_DEFAULTS. */
export interface SimOptions {
  /** Interface to listen on. */
  host?: string;
  /** TCP port; 0 picks a free one. */
  port?: number;
  /** The one model name served; requests naming another get 404. */
  model?: string;
  /** `vllm`: continuous batching with a KV cache; `simple`: v1's fixed TTFT and step period.
   * Unset, it is `simple` when a simple-only timing field is set (so v1 flags keep their meaning), else `vllm`. */
  engine?: EngineKind;
  /** Calibration profile of the vllm engine (PROFILES). */
  profile?: string;
  /** vllm: most requests in the running batch. */
  maxNumSeqs?: number;
  /** vllm: token budget of one step (decodes plus prefill chunks). */
  maxNumBatchedTokens?: number;
  /** vllm: KV cache capacity in tokens; 0 takes the profile's. */
  kvCacheTokens?: number;
  /** vllm: share full prompt blocks between requests with the same prefix. */
  enablePrefixCaching?: boolean;
  /** vllm: `fcfs`, or `priority` (higher gateway band or `x-sim-priority` first). */
  scheduling?: 'fcfs' | 'priority';
  /** Simulated replicas behind the gateway (or picked least-loaded without one). */
  replicas?: number;
  /** Put flow control (the inference gateway's admission and queues) in front. */
  gateway?: boolean;
  /** Gateway mode: forward to this OpenAI base URL instead of simulated replicas. */
  upstream?: string;
  /** Gateway: priority of each `x-gateway-inference-objective`; unknown objectives get 0. */
  objectives?: Record<string, number>;
  /** Gateway: in-flight requests per replica at saturation 1.0; simple engine: requests generating at once. */
  maxConcurrency?: number;
  /** Gateway: admit up to maxConcurrency·(1 + headroom) per replica. */
  headroom?: number;
  /** Gateway: longest wait in the queue before a 429. */
  queueTimeoutS?: number;
  /** Gateway: most requests queued at once before a 429. */
  queueCapacity?: number;
  /** simple: fixed time from admission to the first token, before prefill. */
  ttftMs?: number;
  /** simple: time between engine steps, i.e. between a stream's tokens. */
  itlMs?: number;
  /** simple: extra time to first token per prompt token. */
  prefillUsPerToken?: number;
  /** Longest accepted prompt plus max_tokens, in tokens. */
  maxModelLen?: number;
  /** Leading output tokens sent as `delta.reasoning_content` (chat only). */
  reasoningTokens?: number;
  /** Probability of each fault per request. */
  faults?: FaultRates;
  /** LoRA adapters served besides the base model (vLLM --lora-modules names); requests may name any of them. */
  loraModules?: string[];
  /** Most adapters loaded at once (vLLM --max-loras); a request for another waits for one to go idle. */
  maxLoras?: number;
  /** Time to load an adapter that is not loaded, before its request reaches the engine. */
  loraLoadMs?: number;
  /** Length of the one pause a `stall` fault inserts. */
  stallMs?: number;
  /** Seed of the fault PRNG. */
  faultSeed?: number;
  /** Honour the `x-sim-fault` request header. */
  allowFaultHeader?: boolean;
  /** Where to send one OpenTelemetry span per request (vLLM's --otlp-traces-endpoint); '' sends none. */
  otlpTracesEndpoint?: string;
  /** Disaggregated serving: prefill replicas in front of the `replicas` decode replicas; 0 serves aggregated. */
  prefillReplicas?: number;
  /** Disaggregated serving: fixed time to move one request's KV cache from its prefill to its decode replica. */
  kvTransferMs?: number;
  /** Disaggregated serving: further KV transfer time per prompt token. */
  kvTransferUsPerToken?: number;
}

/** SimOptions with every field present. */
export type ResolvedSimOptions = Required<SimOptions>;

/** The gateway's default objectives: the priority bands of the studies. */
export const DEFAULT_OBJECTIVES: Readonly<Record<string, number>> = { premium: 100, standard: 0, batch: -10 };

/** Defaults for every setting (the vllm ones are the seed experiment's deployment). */
export const SIM_DEFAULTS: ResolvedSimOptions = {
  host: '127.0.0.1',
  port: 0,
  model: 'loadfleet-sim',
  engine: 'vllm',
  profile: DEFAULT_PROFILE,
  maxNumSeqs: 128,
  maxNumBatchedTokens: 8192,
  kvCacheTokens: 0,
  enablePrefixCaching: false,
  scheduling: 'fcfs',
  replicas: 1,
  gateway: false,
  upstream: '',
  objectives: { ...DEFAULT_OBJECTIVES },
  maxConcurrency: 128,
  headroom: 0.1,
  queueTimeoutS: 120,
  queueCapacity: 10_000,
  ttftMs: 40,
  itlMs: 8,
  prefillUsPerToken: 2,
  maxModelLen: 32768,
  reasoningTokens: 0,
  loraModules: [],
  maxLoras: 1,
  loraLoadMs: 25,
  faults: {},
  stallMs: 500,
  faultSeed: 1,
  allowFaultHeader: false,
  otlpTracesEndpoint: '',
  prefillReplicas: 0,
  kvTransferMs: 5,
  kvTransferUsPerToken: 0,
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
  ['maxNumSeqs', 1, true],
  ['maxNumBatchedTokens', 1, true],
  ['kvCacheTokens', 0, true],
  ['replicas', 1, true, 64],
  ['maxConcurrency', 1, true],
  ['headroom', 0, false],
  ['queueTimeoutS', 0.001, false],
  ['queueCapacity', 0, true],
  ['ttftMs', 0, false],
  ['itlMs', 0.1, false],
  ['prefillUsPerToken', 0, false],
  ['maxModelLen', 1, true],
  ['reasoningTokens', 0, true],
  ['maxLoras', 1, true],
  ['loraLoadMs', 0, false],
  ['stallMs', 0, false],
  ['faultSeed', 0, true, 0xffffffff],
  ['prefillReplicas', 0, true, 64],
  ['kvTransferMs', 0, false],
  ['kvTransferUsPerToken', 0, false],
];

const CHOICES: [field: keyof ResolvedSimOptions, allowed: readonly string[]][] = [
  ['engine', ['vllm', 'simple']],
  ['scheduling', ['fcfs', 'priority']],
  ['profile', Object.keys(PROFILES)],
];

/** The settings only the simple engine reads. */
export const SIMPLE_TIMING_FIELDS = ['ttftMs', 'itlMs', 'prefillUsPerToken'] as const;

/** Fills defaults (kvCacheTokens 0 becomes the profile's) and validates; throws SimOptionsError listing every problem. */
export function resolveSimOptions(input: SimOptions = {}): ResolvedSimOptions {
  const defined = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  const simpleTiming = SIMPLE_TIMING_FIELDS.filter((f) => input[f] !== undefined);
  const engine = input.engine ?? (simpleTiming.length > 0 ? 'simple' : SIM_DEFAULTS.engine);
  const options: ResolvedSimOptions = { ...SIM_DEFAULTS, ...defined, engine };
  const problems: string[] = [];
  // Ignoring a timing the caller asked for would be a silent lie about the server's behaviour.
  if (engine === 'vllm') for (const f of simpleTiming) problems.push(`${f}: applies to the simple engine only`);
  for (const [field, min, integer, max] of NUMBER_RULES) {
    const value = options[field];
    const ok =
      typeof value === 'number' && value >= min && value <= (max ?? Number.MAX_SAFE_INTEGER) && (!integer || Number.isInteger(value));
    if (!ok)
      problems.push(`${field}: expected ${integer ? 'an integer' : 'a number'} >= ${min}${max === undefined ? '' : ` and <= ${max}`}`);
  }
  for (const [field, allowed] of CHOICES) {
    if (!allowed.includes(options[field] as string)) problems.push(`${field}: expected one of ${allowed.join(', ')}`);
  }
  if (typeof options.host !== 'string' || options.host === '') problems.push('host: expected a non-empty string');
  if (typeof options.model !== 'string' || options.model === '') problems.push('model: expected a non-empty string');
  if (!Array.isArray(options.loraModules) || options.loraModules.some((n) => typeof n !== 'string' || n === '' || n === options.model))
    problems.push('loraModules: expected adapter names, none empty or equal to the base model');
  problems.push(...faultRateProblems(options.faults), ...objectiveProblems(options.objectives), ...modeProblems(options));
  const profile = PROFILES[options.profile];
  if (profile && options.kvCacheTokens === 0) options.kvCacheTokens = profile.kvCacheTokens;
  // Any request the server accepts must fit in the KV cache alone, or it could never be scheduled.
  if (options.engine === 'vllm' && options.kvCacheTokens < options.maxModelLen)
    problems.push(`kvCacheTokens: ${options.kvCacheTokens} is below maxModelLen ${options.maxModelLen}`);
  if (problems.length > 0) throw new SimOptionsError(problems);
  return options;
}

function objectiveProblems(objectives: unknown): string[] {
  if (typeof objectives !== 'object' || objectives === null) return ['objectives: expected an object of name -> priority'];
  return Object.entries(objectives)
    .filter(([, priority]) => !Number.isInteger(priority))
    .map(([name]) => `objectives.${name}: expected an integer priority`);
}

function modeProblems(options: ResolvedSimOptions): string[] {
  const problems: string[] = [];
  if (options.otlpTracesEndpoint !== '' && !(URL.canParse(options.otlpTracesEndpoint) && /^https?:/.test(options.otlpTracesEndpoint)))
    problems.push('otlpTracesEndpoint: expected an http(s) URL');
  // The split runs the vLLM model's scheduler on both sides; the simple engine has no prefill to split.
  if (options.prefillReplicas > 0 && (options.engine !== 'vllm' || options.upstream !== ''))
    problems.push('prefillReplicas: needs the vllm engine and simulated replicas (no --upstream)');
  return [...problems, ...upstreamProblems(options)];
}

function upstreamProblems(options: ResolvedSimOptions): string[] {
  if (options.upstream === '') return [];
  if (!options.gateway) return ['upstream: needs gateway mode (--gateway)'];
  return URL.canParse(options.upstream) && /^https?:/.test(options.upstream) ? [] : ['upstream: expected an http(s) URL'];
}
