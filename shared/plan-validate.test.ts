import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PLAN_DEFAULTS } from './plan.js';
import { validatePlan } from './plan-validate.js';

// A valid plan touching every kind of object; each rule below changes a few paths in a copy of it.
const BASE = {
  schema: 'loadfleet.plan/v1',
  name: 'unit',
  seed: 7,
  duration_s: 100,
  target: { base_url: 'http://127.0.0.1:8000/v1', api: 'chat', model: 'm', api_key_env: 'KEY', headers: { 'x-a': 'b' } },
  classes: [
    {
      name: 'rt',
      priority: 10,
      headers: { 'x-gateway-inference-objective': 'premium' },
      prompt: { input_tokens: 100, output_tokens: 10 },
      load: {
        model: 'poisson',
        phases: [{ start_s: 10, duration_s: 50, rate: { pattern: 'noisy-sinusoidal', center: 3, amplitude: 0.6, period_s: 37 } }],
      },
      slo: { ttft_p95_ms: 250 },
    },
    {
      name: 'batch',
      prompt: { input_tokens: 1000, output_tokens: 10 },
      load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 50, rate_per_s: 2 }] },
    },
    {
      name: 'closed',
      prompt: { input_tokens: 100, output_tokens: 10 },
      load: { model: 'concurrency', phases: [{ start_s: 0, duration_s: 100, concurrency: 4 }] },
    },
  ],
  windows: [{ name: 'w', start_s: 0, end_s: 50 }],
  scrape: [{ name: 's', url: 'http://127.0.0.1:9090/metrics', interval_s: 1 }],
};

const REMOVE = Symbol('remove');
type Changes = Record<string, unknown>;

// `changes` maps a path like `classes[0].prompt.input_tokens` to a new value (or REMOVE).
function changed(changes: Changes): unknown {
  const plan: unknown = structuredClone(BASE);
  for (const [path, value] of Object.entries(changes)) {
    const keys = path.match(/[^.[\]]+/g) ?? [];
    let node = plan as Record<string, unknown>;
    for (const key of keys.slice(0, -1)) node = node[key] as Record<string, unknown>;
    const last = keys.at(-1)!;
    if (value === REMOVE) Reflect.deleteProperty(node, last);
    else node[last] = value;
  }
  return plan;
}

function problemsOf(input: unknown): string[] {
  const result = validatePlan(input);
  return result.ok ? [] : result.problems;
}

const RATE = 'classes[0].load.phases[0].rate';
const NOISY = { pattern: 'noisy-sinusoidal', center: 3, amplitude: 0.6, period_s: 37 };

// [changes, the exact problems expected]; an empty list means the change is accepted.
const RULES: [Changes, string[]][] = [
  // root
  [{ schema: 'loadfleet.plan/v2' }, ['schema: must be "loadfleet.plan/v1"']],
  [{ schema: REMOVE }, ['schema: is required']],
  [{ name: '' }, ['name: must not be empty']],
  [{ name: 5 }, ['name: must be a string']],
  [{ name: 'a b' }, ['name: must use only letters, digits, ".", "_" and "-"']],
  [{ name: 'a'.repeat(129) }, ['name: must be at most 128 characters']],
  [{ name: 'a'.repeat(128) }, []],
  [{ seed: '42' }, ['seed: must be a number']],
  [{ seed: 1.5 }, ['seed: must be an integer']],
  [{ seed: -1 }, ['seed: must be >= 0']],
  [{ seed: 2 ** 53 }, ['seed: must be a safe integer']],
  [{ seed: 0 }, []],
  [{ duration_s: 0 }, ['duration_s: must be > 0']],
  [{ duration_s: 86_401 }, ['duration_s: must be <= 86400']],
  [{ duration_s: Number.POSITIVE_INFINITY }, ['duration_s: must be a finite number']],
  [{ duration_s: REMOVE }, ['duration_s: is required']],
  [{ drain_timeout_s: -1 }, ['drain_timeout_s: must be >= 0']],
  [{ drain_timeout_s: 0 }, []],
  [{ max_error_share: 1.5 }, ['max_error_share: must be <= 1']],
  [{ max_error_share: -0.1 }, ['max_error_share: must be >= 0']],
  [{ durations_s: 5 }, ['durations_s: unknown key (did you mean "duration_s"?)']],
  [{ zzz: 1 }, ['zzz: unknown key']],
  [{ 'odd key': 1 }, ['$["odd key"]: unknown key']],
  // target
  [{ target: REMOVE }, []],
  [{ target: 'sim' }, ['target: must be an object']],
  [{ 'target.base_url': 'ftp://host/v1' }, ['target.base_url: must be an http(s) URL']],
  [{ 'target.base_url': 'not a url' }, ['target.base_url: must be an http(s) URL']],
  [{ 'target.base_url': 'https://user:secret@host/v1' }, ['target.base_url: must not contain credentials']],
  [{ 'target.api': 'grpc' }, ['target.api: must be one of "chat", "completions", "responses", "embeddings", "rerank", "anthropic"']],
  [{ 'target.api': 'completions' }, []],
  [{ 'target.model': '' }, ['target.model: must not be empty']],
  [{ 'target.model': REMOVE }, ['target.model: is required']],
  [
    { 'target.api_key_env': '1KEY' },
    ['target.api_key_env: must be an environment variable name (letters, digits and "_", not starting with a digit)'],
  ],
  [{ 'target.api_key_env': REMOVE }, []],
  [{ 'target.timeout_s': 0 }, ['target.timeout_s: must be > 0']],
  [{ 'target.modle': 'm' }, ['target.modle: unknown key (did you mean "model"?)']],
  [{ 'target.headers': [] }, ['target.headers: must be an object']],
  [{ 'target.headers': { 'bad name': 'x' } }, ['target.headers["bad name"]: must be a valid HTTP header name']],
  [{ 'target.headers': { 'x-a': 'a\r\nx-b: c' } }, ['target.headers["x-a"]: must not contain CR, LF or NUL']],
  [{ 'target.headers': { 'x-a': 1 } }, ['target.headers["x-a"]: must be a string']],
  [
    { 'target.headers': { Authorization: 'Bearer sk-1' } },
    ['target.headers.Authorization: must not be set in a plan (the key is read from target.api_key_env)'],
  ],
  [{ 'target.headers': { 'X-A': '1', 'x-a': '2' } }, ['target.headers["x-a"]: same header as "X-A" (names are case-insensitive)']],
  // classes
  [{ classes: [] }, ['classes: must not be empty']],
  [{ classes: {} }, ['classes: must be an array']],
  [{ classes: REMOVE }, ['classes: is required']],
  [{ 'classes[1]': 'batch' }, ['classes[1]: must be an object']],
  [{ 'classes[1].name': 'rt' }, ['classes[1].name: duplicate "rt" (first used by classes[0])']],
  [{ 'classes[0].name': 'a'.repeat(65) }, ['classes[0].name: must be at most 64 characters']],
  [{ 'classes[0].name': 'real time' }, ['classes[0].name: must use only letters, digits, ".", "_" and "-"']],
  [{ 'classes[0].priority': 1.5 }, ['classes[0].priority: must be an integer']],
  [{ 'classes[0].priority': -10 }, []],
  [{ 'classes[0].headers': { 'x:y': 'z' } }, ['classes[0].headers["x:y"]: must be a valid HTTP header name']],
  [{ 'classes[0].promt': {} }, ['classes[0].promt: unknown key (did you mean "prompt"?)']],
  [{ 'classes[0].prompt': REMOVE }, ['classes[0].prompt: is required']],
  [{ 'classes[0].load': REMOVE }, ['classes[0].load: is required']],
  [{ 'target.require_usage': true }, []],
  [{ 'target.require_usage': 'yes' }, ['target.require_usage: must be a boolean']],
  [{ 'target.tokenizer': '/models/m/tokenizer.json' }, []],
  [{ 'target.tokenizer': 7 }, ['target.tokenizer: must be a string']],
  [{ prompt_calibration: {} }, ['prompt_calibration: is written by the coordinator, not in a plan']],
  // prompt
  [{ 'classes[0].prompt.input_tokens': 0 }, ['classes[0].prompt.input_tokens: must be >= 1']],
  [{ 'classes[0].prompt.output_tokens': 1.5 }, ['classes[0].prompt.output_tokens: must be an integer']],
  [{ 'classes[0].prompt.output_tokens': REMOVE }, ['classes[0].prompt.output_tokens: is required']],
  [{ 'classes[0].prompt.ignore_eos': 'yes' }, ['classes[0].prompt.ignore_eos: must be a boolean']],
  [{ 'classes[0].prompt.canary': 1 }, ['classes[0].prompt.canary: must be a boolean']],
  [{ 'classes[0].prompt.canary': true }, []],
  [{ 'classes[0].prompt.cache': 'none' }, ['classes[0].prompt.cache: must be one of "unique", "shared"']],
  [{ 'classes[0].prompt.cache': 'shared' }, ['classes[0].prompt.shared_prefix_tokens: is required when cache is "shared"']],
  [{ 'classes[0].prompt.shared_prefix_tokens': 10 }, ['classes[0].prompt.shared_prefix_tokens: only allowed when cache is "shared"']],
  [
    { 'classes[0].prompt.cache': 'shared', 'classes[0].prompt.shared_prefix_tokens': 100 },
    ['classes[0].prompt.shared_prefix_tokens: must be < input_tokens (100)'],
  ],
  [{ 'classes[0].prompt.cache': 'shared', 'classes[0].prompt.shared_prefix_tokens': 99 }, []],
  [{ 'classes[0].prompt.inputTokens': 5 }, ['classes[0].prompt.inputTokens: unknown key (did you mean "input_tokens"?)']],
  [{ 'classes[0].prompt.prefix': 5 }, ['classes[0].prompt.prefix: unknown key']],
  // load and phases
  [
    { 'classes[0].load.model': 'poison' },
    ['classes[0].load.model: must be one of "constant-rate", "poisson", "concurrency", "trace", "sessions"'],
  ],
  [{ 'classes[0].load.phases': [] }, ['classes[0].load.phases: must not be empty']],
  [{ 'classes[0].load.phases': {} }, ['classes[0].load.phases: must be an array']],
  [{ 'classes[0].load.phases[0].start_s': -1 }, ['classes[0].load.phases[0].start_s: must be >= 0']],
  [{ 'classes[0].load.phases[0].duration_s': 0 }, ['classes[0].load.phases[0].duration_s: must be > 0']],
  [{ 'classes[1].load.phases[0].rate_per_s': 0 }, ['classes[1].load.phases[0].rate_per_s: must be > 0']],
  [{ 'classes[1].load.phases[0].rate_per_s': REMOVE }, ['classes[1].load.phases[0]: must set one of "rate_per_s", "rate"']],
  [{ 'classes[1].load.phases[0].rate': NOISY }, ['classes[1].load.phases[0]: must set only one of "rate_per_s", "rate"']],
  [{ 'classes[2].load.phases[0].concurrency': REMOVE }, ['classes[2].load.phases[0].concurrency: is required']],
  [
    { 'classes[1].load.model': 'constant-rate', 'classes[1].load.phases[0].rate_per_s': REMOVE },
    ['classes[1].load.phases[0].rate_per_s: is required'],
  ],
  [
    { 'classes[0].load.model': 'constant-rate' },
    ['classes[0].load.phases[0].rate: not allowed with model "constant-rate" (use "rate_per_s")'],
  ],
  [
    { 'classes[1].load.phases[0].concurrency': 3 },
    ['classes[1].load.phases[0].concurrency: not allowed with model "poisson" (use "rate_per_s" or "rate")'],
  ],
  [
    { 'classes[2].load.phases[0].rate_per_s': 3 },
    ['classes[2].load.phases[0].rate_per_s: not allowed with model "concurrency" (use "concurrency")'],
  ],
  [{ 'classes[1].load.model': 'constant-rate' }, []],
  [{ 'classes[2].load.phases[0].concurrency': 1.5 }, ['classes[2].load.phases[0].concurrency: must be an integer']],
  [{ 'classes[2].load.phases[0].concurrency': 0 }, ['classes[2].load.phases[0].concurrency: must be >= 1']],
  [{ 'classes[2].load.phases[0].concurrency': '8' }, ['classes[2].load.phases[0].concurrency: must be a number or a pattern object']],
  [{ 'classes[2].load.phases[0].concurrency': { ...NOISY, center: 8 } }, []],
  [
    { 'classes[2].load.phases[0].concurrency': { pattern: 'constant', value: 0 } },
    ['classes[2].load.phases[0].concurrency.value: must be > 0'],
  ],
  [{ [RATE]: 3 }, [`${RATE}: must be a pattern object (use "rate_per_s" for a fixed rate)`]],
  [{ [RATE]: 'noisy' }, [`${RATE}: must be a pattern object (use "rate_per_s" for a fixed rate)`]],
  [{ 'classes[0].load.phases[0].rat': 1 }, ['classes[0].load.phases[0].rat: unknown key (did you mean "rate"?)']],
  [{ 'classes[0].load.shape': 1 }, ['classes[0].load.shape: unknown key']],
  // phase timing
  [{ 'classes[1].load.phases[0].duration_s': 200 }, ['classes[1].load.phases[0]: ends at 200 s, after duration_s (100)']],
  [
    { 'classes[1].load.phases[1]': { start_s: 40, duration_s: 10, rate_per_s: 1 } },
    ['classes[1].load.phases[1]: overlaps phases[0] (which runs until 50 s)'],
  ],
  [{ 'classes[1].load.phases[1]': { start_s: 50, duration_s: 50, rate_per_s: 1 } }, []],
  [
    // listed out of order, and a long phase that covers a later, non-adjacent one
    {
      'classes[1].load.phases': [
        { start_s: 30, duration_s: 5, rate_per_s: 1 },
        { start_s: 0, duration_s: 90, rate_per_s: 1 },
        { start_s: 60, duration_s: 5, rate_per_s: 1 },
      ],
    },
    [
      'classes[1].load.phases[0]: overlaps phases[1] (which runs until 90 s)',
      'classes[1].load.phases[2]: overlaps phases[1] (which runs until 90 s)',
    ],
  ],
  // patterns
  [{ [`${RATE}.pattern`]: 'sine' }, [`${RATE}.pattern: must be one of "constant", "ramp", "noisy-sinusoidal"`]],
  [{ [`${RATE}.pattern`]: REMOVE }, [`${RATE}.pattern: is required`]],
  [{ [RATE]: { pattern: 'constant', value: 0 } }, [`${RATE}.value: must be > 0`]],
  [{ [RATE]: { pattern: 'constant', value: 2, center: 3 } }, [`${RATE}.center: unknown key`]],
  [{ [RATE]: { pattern: 'ramp', from: -1, to: 3 } }, [`${RATE}.from: must be >= 0`]],
  [{ [RATE]: { pattern: 'ramp', from: 1, to: -3 } }, [`${RATE}.to: must be >= 0`]],
  [{ [RATE]: { pattern: 'ramp', from: 0, to: 0 } }, [`${RATE}: "from" and "to" must not both be 0`]],
  [{ [RATE]: { pattern: 'ramp', from: 0, to: 5 } }, []],
  [{ [`${RATE}.center`]: 0 }, [`${RATE}.center: must be > 0`]],
  [{ [`${RATE}.amplitude`]: -1 }, [`${RATE}.amplitude: must be >= 0`]],
  [{ [`${RATE}.period_s`]: 0 }, [`${RATE}.period_s: must be > 0`]],
  [{ [`${RATE}.noise`]: -0.1 }, [`${RATE}.noise: must be >= 0`]],
  [{ [`${RATE}.spike_probability`]: 1.5 }, [`${RATE}.spike_probability: must be <= 1`]],
  [{ [`${RATE}.phase_offset`]: 'x' }, [`${RATE}.phase_offset: must be a number`]],
  [{ [`${RATE}.ramp_s`]: -1 }, [`${RATE}.ramp_s: must be >= 0`]],
  [{ [`${RATE}.amplitud`]: 1 }, [`${RATE}.amplitud: unknown key (did you mean "amplitude"?)`]],
  [{ [RATE]: { ...NOISY, noise: 0.3, spike_probability: 0.02, phase_offset: -0.25, ramp_s: 10 } }, []],
  // slo
  [{ 'classes[0].slo': 1 }, ['classes[0].slo: must be an object']],
  [{ 'classes[0].slo.ttft_p95_ms': 0 }, ['classes[0].slo.ttft_p95_ms: must be > 0']],
  [{ 'classes[0].slo.tpot_p95_ms': -1 }, ['classes[0].slo.tpot_p95_ms: must be > 0']],
  [{ 'classes[0].slo.e2e_p95_ms': '1s' }, ['classes[0].slo.e2e_p95_ms: must be a number']],
  [{ 'classes[0].slo.success_rate_min': 1.01 }, ['classes[0].slo.success_rate_min: must be <= 1']],
  [{ 'classes[0].slo.ttft_p99_ms': 300 }, ['classes[0].slo.ttft_p99_ms: unknown key (did you mean "ttft_p95_ms"?)']],
  // windows
  [{ windows: 'all' }, ['windows: must be an array']],
  [{ windows: [] }, []],
  [{ 'windows[0].name': 'all' }, ['windows[0].name: "all" is reserved (it is always the whole run)']],
  [{ 'windows[1]': { name: 'w', start_s: 60, end_s: 70 } }, ['windows[1].name: duplicate "w" (first used by windows[0])']],
  [{ 'windows[0].start_s': -1 }, ['windows[0].start_s: must be >= 0']],
  [{ 'windows[0].start_s': 50 }, ['windows[0].end_s: must be > start_s (50)']],
  [{ 'windows[0].end_s': 0 }, ['windows[0].end_s: must be > 0']],
  [{ 'windows[0].end_s': 101 }, ['windows[0].end_s: must be <= duration_s (100)']],
  [{ 'windows[0].end_s': 100 }, []],
  [{ 'windows[0].ends_s': 1 }, ['windows[0].ends_s: unknown key (did you mean "end_s"?)']],
  // scrape
  [{ scrape: {} }, ['scrape: must be an array']],
  [{ 'scrape[0].url': 'localhost:9090' }, ['scrape[0].url: must be an http(s) URL']],
  [{ 'scrape[0].interval_s': 0.05 }, ['scrape[0].interval_s: must be >= 0.1']],
  [{ 'scrape[0].interval_s': REMOVE }, ['scrape[0].interval_s: is required']],
  [{ 'scrape[1]': { name: 's', url: 'https://x/metrics', interval_s: 5 } }, ['scrape[1].name: duplicate "s" (first used by scrape[0])']],
  // the server's spans
  [{ traces: {} }, []],
  [{ traces: { http: '127.0.0.1:0', grpc: '127.0.0.1:0', flush_s: 2 } }, []],
  [{ traces: { http: '[::1]:4318' } }, []],
  [{ traces: { http: 'localhost' } }, ['traces.http: must be host:port (port 0: any free port)']],
  [{ traces: { grpc: '0.0.0.0:99999' } }, ['traces.grpc: port must be at most 65535']],
  [{ traces: { grpc: '0.0.0.0:4318' } }, ['traces.grpc: must not be the same address as traces.http']],
  [{ traces: { flush_s: -1 } }, ['traces.flush_s: must be >= 0']],
  [{ traces: { listen: ':4318' } }, ['traces.listen: unknown key']],
  // the SLO basis
  [{ 'classes[0].slo.basis': 'intended' }, []],
  [{ 'classes[0].slo.basis': 'arrival' }, ['classes[0].slo.basis: must be one of "sent", "intended"']],
  [
    { 'classes[2].slo': { ttft_p95_ms: 100, basis: 'intended' } },
    ['classes[2].slo.basis: "intended" needs an open-loop class (a closed loop has no intended send time)'],
  ],
];

describe('validatePlan rules', () => {
  it('accepts the base plan', () => {
    expect(problemsOf(BASE)).toEqual([]);
  });

  it.each(RULES)('%o → %j', (changes, expected) => {
    expect(problemsOf(changed(changes))).toEqual(expected);
  });

  it.each([null, [], 'plan', 42])('rejects a non-object root (%j)', (input) => {
    expect(problemsOf(input)).toEqual(['$: must be an object']);
  });
});

describe('validatePlan as a whole', () => {
  it('reports every problem at once', () => {
    const input = changed({
      schema: 'v1',
      seed: -3,
      'target.api': 'rest',
      'classes[0].promt': {},
      'classes[1].load.phases[0].rate_per_s': 0,
    });
    expect(problemsOf(input)).toEqual([
      'schema: must be "loadfleet.plan/v1"',
      'seed: must be >= 0',
      'target.api: must be one of "chat", "completions", "responses", "embeddings", "rerank", "anthropic"',
      'classes[0].promt: unknown key (did you mean "prompt"?)',
      'classes[1].load.phases[0].rate_per_s: must be > 0',
    ]);
  });

  it.each(['batch-interference', 'minimal'])('accepts examples/%s.plan.json', (name) => {
    const text = readFileSync(new URL(`../examples/${name}.plan.json`, import.meta.url), 'utf8');
    expect(problemsOf(JSON.parse(text))).toEqual([]);
  });

  it('fills in defaults', () => {
    const result = validatePlan(BASE);
    if (!result.ok) throw new Error(result.problems.join('\n'));
    const { plan } = result;
    expect(plan.drain_timeout_s).toBe(PLAN_DEFAULTS.drain_timeout_s);
    expect(plan.max_error_share).toBe(PLAN_DEFAULTS.max_error_share);
    expect(plan.target?.timeout_s).toBe(PLAN_DEFAULTS.timeout_s);
    expect(plan.classes[0]?.prompt).toEqual({ input_tokens: 100, output_tokens: 10, ignore_eos: true, cache: 'unique' });
  });

  it('keeps values the plan sets over the defaults', () => {
    const input = changed({
      drain_timeout_s: 5,
      max_error_share: 0.2,
      'target.timeout_s': 10,
      'classes[0].prompt.ignore_eos': false,
      'classes[0].prompt.cache': 'shared',
      'classes[0].prompt.shared_prefix_tokens': 50,
    });
    const result = validatePlan(input);
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.plan).toMatchObject({ drain_timeout_s: 5, max_error_share: 0.2, target: { timeout_s: 10 } });
    expect(result.plan.classes[0]?.prompt).toMatchObject({ ignore_eos: false, cache: 'shared', shared_prefix_tokens: 50 });
  });

  it('does not add a target when the plan has none', () => {
    const result = validatePlan(changed({ target: REMOVE }));
    expect(result.ok && 'target' in result.plan).toBe(false);
  });

  it('never mutates or shares the input', () => {
    const input = deepFreeze(structuredClone(BASE));
    const result = validatePlan(input);
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(input).toEqual(BASE);
    expect(result.plan.classes[0]?.load).not.toBe(input.classes[0]?.load);
    expect(result.plan.windows).not.toBe(input.windows);
  });
});

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
