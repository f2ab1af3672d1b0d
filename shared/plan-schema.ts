// The `loadfleet.plan/v1` file format, defined once (../spec/plan.md). The types in plan.ts, the
// published JSON Schema (file-schemas.ts) and the shape check of plan-validate.ts all come from
// these definitions; what a schema cannot say (phases inside the duration, a phase matching its
// load model, fields a trace or session class must not have) is the rules in plan-validate.ts.
import { type NumberOptions, type TNumber, type TOptional, Type } from '@sinclair/typebox';
import { API_DESCRIPTORS, API_NAMES } from './apis/registry.js';
import { CostSpec } from './cost-schema.js';
import { closed, fileRoot, oneOf, say } from './schema-problems.js';
import { type LatencyBoundKey, SLO_LATENCY_BOUNDS } from './slo-bounds.js';

/** The only plan schema this version reads. */
export const PLAN_SCHEMA = 'loadfleet.plan/v1';

/** Defaults applied where a plan is silent. */
export const PLAN_DEFAULTS = {
  drain_timeout_s: 30,
  max_error_share: 0.01,
  timeout_s: 90,
} as const;

/** Prompt defaults: the studies always send fixed-length, cache-defeating prompts. */
export const PROMPT_DEFAULTS = { ignore_eos: true, cache: 'unique' } as const;

/** Defaults of `load.trace`. */
export const TRACE_DEFAULTS = { time_scale: 1, start_s: 0, block_tokens: 512 } as const;

const NAME_WORDS = { pattern: 'must use only letters, digits, ".", "_" and "-"' };

/** A name that ends up in file names and metric names. */
export function nameField(maxLength: number, description?: string) {
  return say(Type.String({ minLength: 1, maxLength, pattern: '^[A-Za-z0-9._-]+$', ...(description && { description }) }), NAME_WORDS);
}

// Class, window and scrape names end up inside metric names and file names, hence the short limit.
const shortName = (description: string) => nameField(64, description);
const positive = (description?: string, options?: NumberOptions) =>
  Type.Number({ exclusiveMinimum: 0, ...options, ...(description && { description }) });
const tokens = (description?: string) => Type.Integer({ minimum: 1, ...(description && { description }) });
const share = (description?: string, options?: NumberOptions) =>
  Type.Number({ minimum: 0, maximum: 1, ...options, ...(description && { description }) });
const text = (description: string) => Type.String({ minLength: 1, description });

// RFC 7230 `token`: what undici accepts as a header name (checked by plan-validate.ts, which also
// refuses Authorization and the same name twice in different case).
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Extra HTTP headers: name → value. */
export const Headers = Type.Unsafe<Record<string, string>>(
  Type.Object(
    {},
    {
      // CR/LF would let a value inject further headers; NUL is refused by every HTTP stack.
      additionalProperties: say(Type.String({ pattern: '^[^\\r\\n\\u0000]*$' }), { pattern: 'must not contain CR, LF or NUL' }),
      propertyNames: { pattern: HEADER_NAME.source },
      description: 'Extra HTTP headers sent with every request (never Authorization: the key comes from target.api_key_env).',
    },
  ),
);

/** Which API a plan targets: one of the API modules in shared/apis/ (its registry). */
export const ApiKind = oneOf([...API_NAMES], {
  description: `${API_DESCRIPTORS.slice(0, -1)
    .map((d) => d.summary)
    .join(', ')} or ${API_DESCRIPTORS.at(-1)?.summary}.`,
});

/** Where requests go; absent from a plan means "the built-in engine-sim". */
export const Target = closed(
  {
    base_url: text('The OpenAI base URL, ending in /v1 (http or https, no credentials).'),
    api: ApiKind,
    model: text('The model name sent in every request.'),
    api_key_env: Type.Optional(
      say(
        Type.String({
          minLength: 1,
          pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
          description: 'The environment variable holding the API key on each agent (never the key).',
        }),
        {
          pattern: 'must be an environment variable name (letters, digits and "_", not starting with a digit)',
        },
      ),
    ),
    timeout_s: Type.Optional(positive('Seconds before a request is abandoned.', { default: PLAN_DEFAULTS.timeout_s })),
    headers: Type.Optional(Headers),
    require_usage: Type.Optional(
      Type.Boolean({ default: false, description: 'When true, a stream without a usage event is `missing_usage`, a failure.' }),
    ),
    reset_cache_between_runs: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          "Before each run (every sweep stage, experiment run and repeat) empty the server's prefix cache: POST /reset_prefix_cache (vLLM) or /flush_cache (SGLang); the run fails before any load if neither answers.",
      }),
    ),
    tokenizer: Type.Optional(
      say(
        Type.String({
          pattern: '\\S',
          description:
            "The model's Hugging Face tokenizer.json (a path), or its model id (org/name or org/name@revision: fetched once into the Hugging Face cache, HF_ENDPOINT and HF_TOKEN honoured, HF_HUB_OFFLINE=1 reads only the cache), for sizing prompts and counting output.",
        }),
        {
          pattern: 'must be the path of a tokenizer.json or a Hugging Face model id',
        },
      ),
    ),
  },
  { description: 'Where requests go; omit it to use the built-in simulator.' },
);

/** A constant value, written as a pattern. */
export const ConstantPattern = closed({ pattern: Type.Literal('constant'), value: positive() });

/** A linear ramp from `from` to `to` over the phase. */
export const RampPattern = closed({ pattern: Type.Literal('ramp'), from: Type.Number({ minimum: 0 }), to: Type.Number({ minimum: 0 }) });

/** The studies' traffic shape (domain.md §8). */
export const NoisySinusoidalPattern = closed({
  pattern: Type.Literal('noisy-sinusoidal'),
  center: positive(),
  amplitude: Type.Number({ minimum: 0 }),
  period_s: positive(),
  noise: Type.Optional(
    Type.Number({ minimum: 0, description: 'σ of the Gaussian noise redrawn per 0.5 s bucket; default max(0.05, 0.05·center).' }),
  ),
  spike_probability: Type.Optional(share()),
  phase_offset: Type.Optional(Type.Number({ description: 'Phase as a fraction of a period.' })),
  ramp_s: Type.Optional(Type.Number({ minimum: 0, description: 'Linear ramp-in from 0 over this many seconds.' })),
});

const PATTERNS = [ConstantPattern, RampPattern, NoisySinusoidalPattern] as const;

/** A rate (requests/s) or concurrency pattern over time. */
export const Pattern = Type.Union([...PATTERNS]);

/** One active interval of a class; exactly one of the three load fields is set. */
export const Phase = closed(
  {
    start_s: Type.Number({ minimum: 0, description: 'Seconds from the run start.' }),
    duration_s: positive(),
    rate_per_s: Type.Optional(positive('Requests per second (constant-rate, poisson, sessions).')),
    rate: Type.Optional(
      say(Type.Union([...PATTERNS], { description: 'A rate pattern (poisson, sessions).' }), {
        type: 'must be a pattern object (use "rate_per_s" for a fixed rate)',
      }),
    ),
    concurrency: Type.Optional(
      say(
        Type.Union([Type.Integer({ minimum: 1 }), ...PATTERNS], {
          description: 'Requests kept in flight, or a pattern over it (model concurrency).',
        }),
        {
          type: 'must be a number or a pattern object',
        },
      ),
    ),
  },
  { description: 'One active interval: start_s, duration_s and exactly one of rate_per_s, rate or concurrency, the one its model reads.' },
);

const lengthRange = { min: Type.Optional(tokens()), max: Type.Optional(tokens()) };

/** A token count: fixed, or drawn per request (rounded and clamped to [min, max], min ≥ 1). */
export function lengthField(description: string) {
  return say(
    Type.Union(
      [
        tokens(),
        closed({ distribution: Type.Literal('uniform'), min: tokens(), max: tokens() }),
        closed({ distribution: Type.Literal('normal'), mean: positive(), stddev: Type.Number({ minimum: 0 }), ...lengthRange }),
        closed(
          {
            distribution: Type.Literal('lognormal'),
            // exp(mu) is the median; above e^40 tokens it is certainly a unit mistake.
            mu: Type.Number({ minimum: -40, maximum: 40, description: 'Mean of ln(tokens).' }),
            sigma: Type.Number({ minimum: 0, maximum: 10, description: 'Standard deviation of ln(tokens).' }),
            ...lengthRange,
          },
          { description: 'exp(N(mu, sigma²)).' },
        ),
        closed({
          distribution: Type.Literal('histogram'),
          buckets: say(
            Type.Array(say(Type.Tuple([tokens(), positive()]), { type: 'must be a [tokens, weight] pair' }), {
              minItems: 1,
              description: '[tokens, weight] pairs; tokens is drawn with probability weight / Σ weights.',
            }),
            { type: 'must be a non-empty array of [tokens, weight] pairs', empty: 'must be a non-empty array of [tokens, weight] pairs' },
          ),
        }),
      ],
      { description },
    ),
    { type: 'must be a positive integer or a distribution object' },
  );
}

/** `load.trace`: a production trace replayed row by row. */
export const TraceSpec = closed(
  {
    file: text('Path relative to the plan file.'),
    format: oneOf(['mooncake', 'azure', 'burstgpt']),
    time_scale: Type.Optional(
      positive('Trace time × time_scale = time from the run start (0.5 replays twice as fast).', { default: TRACE_DEFAULTS.time_scale }),
    ),
    start_s: Type.Optional(
      Type.Number({
        minimum: 0,
        default: TRACE_DEFAULTS.start_s,
        description: 'Replay from this trace second on (it becomes the run’s t = 0).',
      }),
    ),
    limit: Type.Optional(tokens('At most this many rows.')),
    // engine-sim and vLLM cache 16-token blocks: a block that is not a multiple of 16 could not be
    // cached exactly as the trace's hash ids say.
    block_tokens: Type.Optional(
      say(
        Type.Integer({
          minimum: 1,
          multipleOf: 16,
          default: TRACE_DEFAULTS.block_tokens,
          description: 'Tokens per Mooncake hash id (a multiple of the 16-token KV block).',
        }),
        {
          pattern: 'must be a multiple of 16 (the KV cache block size)',
        },
      ),
    ),
    models: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        description: 'CSV traces: replay only rows whose Model column is one of these (BurstGPT: "ChatGPT", "GPT-4").',
      }),
    ),
    log_types: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        description: 'CSV traces: replay only rows whose Log Type column is one of these (BurstGPT: "Conversation log", "API log").',
      }),
    ),
  },
  { description: 'load.trace, with model "trace" (no phases: the rows are the arrivals and give both lengths).' },
);

/** `prompt.dataset`: real prompts drawn per request. */
export const DatasetSpec = closed(
  {
    file: text('Path relative to the plan file.'),
    format: oneOf(['jsonl', 'sharegpt'], {
      description: 'jsonl: {prompt | messages, output_tokens?} per line; sharegpt: an array of {conversations: [{from, value}]}.',
    }),
    replacement: Type.Optional(
      Type.Boolean({ default: true, description: 'false walks one seeded permutation, each record once per pass.' }),
    ),
    min_input_tokens: Type.Optional(tokens('Keep records whose prompt has at least this many words.')),
    max_input_tokens: Type.Optional(tokens('Keep records whose prompt has at most this many words.')),
  },
  { description: 'prompt.dataset (then prompt.input_tokens is not allowed; prompt.output_tokens is the fallback).' },
);

const thinkSeconds = () => Type.Number({ minimum: 0, maximum: 3600 });

/** `load.session`: multi-turn conversations; each session arrives open loop and is pinned to one agent. */
export const SessionSpec = closed(
  {
    turns: lengthField('User turns per session.'),
    user_tokens: lengthField('Tokens (words) of each new user message.'),
    think_time_s: say(
      Type.Union([thinkSeconds(), closed({ distribution: Type.Literal('uniform'), min: thinkSeconds(), max: thinkSeconds() })], {
        description: "Seconds from a reply's end to the next user message: fixed, or uniform in [min, max].",
      }),
      { type: 'must be a number of seconds or {"distribution": "uniform", "min", "max"}' },
    ),
  },
  { description: 'load.session, with model "sessions" (phases give the session arrivals; prompt.output_tokens sizes each reply).' },
);

/** Shape of each request's prompt. */
export const PromptSpec = closed({
  input_tokens: Type.Optional(
    lengthField('Prompt tokens; required unless the class replays a trace, draws from a dataset or runs sessions.'),
  ),
  output_tokens: Type.Optional(lengthField('Output tokens; required unless the class replays a trace.')),
  dataset: Type.Optional(DatasetSpec),
  ignore_eos: Type.Optional(Type.Boolean({ default: PROMPT_DEFAULTS.ignore_eos })),
  cache: Type.Optional(
    oneOf(['unique', 'shared'], {
      default: PROMPT_DEFAULTS.cache,
      description: '`unique` defeats prefix caching; `shared` starts every prompt with shared_prefix_tokens of the same prefix.',
    }),
  ),
  shared_prefix_tokens: Type.Optional(tokens('Required exactly when cache is "shared"; below input_tokens.')),
  canary: Type.Optional(
    Type.Boolean({
      description:
        "Each prompt starts with its request's marker and asks the model to echo it. Only on a calibrated class of identical requests: refused with a trace, a dataset, sessions or a length distribution.",
    }),
  ),
  tools: Type.Optional(
    Type.Array(
      closed({
        name: nameField(64, 'The function name.'),
        description: Type.Optional(Type.String()),
        parameters: Type.Optional(Type.Object({}, { description: "The function's JSON Schema." })),
      }),
      {
        minItems: 1,
        description: 'api "chat" or "anthropic": function definitions offered with every request (tool calling), in the API\'s own shape.',
      },
    ),
  ),
  images: Type.Optional(
    closed(
      {
        count: Type.Integer({ minimum: 1, maximum: 16, description: 'Images per request.' }),
        width: Type.Integer({ minimum: 1, maximum: 4096, description: 'Pixels.' }),
        height: Type.Integer({ minimum: 1, maximum: 4096, description: 'Pixels.' }),
        shared: Type.Optional(Type.Boolean({ description: 'Every request sends the same images (default: unique per request).' })),
        format: Type.Optional(
          oneOf(['png', 'jpeg'], {
            description: 'png (default: seeded pixels) or jpeg (baseline, one seeded gray level per 8×8 block).',
          }),
        ),
      },
      {
        description:
          'api "chat" or "anthropic": PNG or JPEG images (8-bit grayscale, seeded) sent after the text (chat: image_url data URIs; anthropic: base64 image blocks).',
      },
    ),
  ),
  tool_loop: Type.Optional(
    Type.Boolean({
      description:
        'Sessions with tools (agentic loops): after a reply that calls tools, the next turn sends that reply (its tool_calls) and a role "tool" result per call instead of a new user message; the first result is seeded text of that turn\'s user_tokens, made as a later user message is, the others empty.',
    }),
  ),
  tool_choice: Type.Optional(oneOf(['auto', 'required', 'none'], { description: 'With tools: the tool_choice sent (default: not sent).' })),
  batch_size: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 2048,
      description: 'api "embeddings" or "rerank" only: inputs (rerank: documents) per request, each of input_tokens (default 1).',
    }),
  ),
});

/** Registered load models, one file each under shared/load/. */
export const LoadModelName = oneOf(['constant-rate', 'poisson', 'concurrency', 'trace', 'sessions'], {
  description:
    'constant-rate and poisson: arrivals at a rate; concurrency: a closed loop; trace: replayed rows; sessions: multi-turn conversations.',
});

/** How a class offers its load. */
export const Load = closed({
  model: LoadModelName,
  phases: Type.Optional(
    Type.Array(Phase, { description: 'Required (at least one) for every model but trace; outside every phase the class sends nothing.' }),
  ),
  trace: Type.Optional(TraceSpec),
  session: Type.Optional(SessionSpec),
});

/** The time TTFT is measured from for an SLO. */
export const SloBasis = oneOf(['sent', 'intended'], {
  default: 'sent',
  description:
    'TTFT from the actual send, or from the intended send (ttft_from_intended: keeps any delay the client added; arrival-schedule classes only: refused on closed-loop and sessions classes).',
});

/** Per-class service level objectives; attainment is reported against them. */
export const Slo = closed({
  // One optional bound per row of the SLO table (slo-table.ts).
  ...(Object.fromEntries(SLO_LATENCY_BOUNDS.map((b) => [b.key, Type.Optional(positive(b.description))])) as {
    [K in LatencyBoundKey]: TOptional<TNumber>;
  }),
  success_rate_min: Type.Optional(share()),
  basis: Type.Optional(SloBasis),
});

/**
 * Abort rules (k6's abortOnFail, GuideLLM's over-saturation stop): the run stops early, status
 * aborted with the rule that fired, when a class stays past a limit for `for_s` seconds.
 */
export const AbortRules = closed(
  {
    error_share_above: Type.Optional(
      share("Stop when a class's failed share of the requests that ended in the last window_s exceeds this."),
    ),
    p95_over_slo: Type.Optional(
      positive(
        "Stop when a class's rolling p95 (over window_s) of a latency its SLO bounds (TTFT on the SLO's basis, TPOT, e2e) exceeds this multiple of the bound; a failed request ranks +∞, so more than 5% failed exceeds any multiple.",
      ),
    ),
    for_s: positive('Seconds a limit must be exceeded without a break before the run stops.'),
    window_s: Type.Optional(positive('Rolling window the figures are taken over (s).', { default: 5 })),
    min_requests: Type.Optional(
      Type.Integer({ minimum: 1, default: 10, description: 'Fewer requests ending in the window than this judge nothing.' }),
    ),
  },
  { description: 'Stops an overloaded run early; at least one of error_share_above and p95_over_slo.' },
);

/** One traffic class (tenant). */
export const TrafficClass = closed({
  name: shortName('The class name (in metric and file names).'),
  priority: Type.Optional(Type.Integer()),
  headers: Type.Optional(Headers),
  api: Type.Optional({ ...ApiKind, description: 'The API this class sends to, instead of target.api (a plan may mix APIs).' }),
  adapters: Type.Optional(
    Type.Array(
      closed({
        model: text('The model name requests of this adapter carry (a LoRA adapter the server serves), instead of target.model.'),
        weight: Type.Integer({ minimum: 1, maximum: 10_000, description: 'Relative share, exact over every cycle of Σ weights requests.' }),
      }),
      {
        minItems: 1,
        description: 'LoRA adapters: each request names one of these models, in exact proportion to the weights, in a seeded order.',
      },
    ),
  ),
  prompt: PromptSpec,
  load: Load,
  slo: Type.Optional(Slo),
});

/** A named analysis window, seconds from the run start. */
export const Window = closed(
  {
    name: shortName('The window name ("all", the whole run, is reserved).'),
    start_s: Type.Number({ minimum: 0 }),
    end_s: positive('At most duration_s.'),
  },
  { description: 'A request belongs to a window by its intended send time (rate models) or its send time (concurrency).' },
);

/** A Prometheus endpoint the coordinator scrapes. */
export const ScrapeTarget = closed({
  name: shortName('The endpoint name.'),
  url: text('The metrics URL (http or https).'),
  interval_s: Type.Number({ minimum: 0.1, description: 'Seconds between scrapes (pre and post snapshots are always taken).' }),
  bearer_token_file: Type.Optional(
    text(
      "A file on the coordinator holding a bearer token sent as 'Authorization: Bearer …' (e.g. a projected Kubernetes service-account token); read at every scrape, so a rotated token is picked up.",
    ),
  ),
});

/** Defaults of `traces`: the ports the OpenTelemetry Collector's OTLP receiver listens on. */
export const TRACES_DEFAULTS = { http: '0.0.0.0:4318', grpc: '0.0.0.0:4317', flush_s: 10 } as const;

const listenAddress = (description: string) =>
  say(Type.String({ pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5}$', description }), {
    pattern: 'must be host:port (port 0: any free port)',
  });

/** The server's OpenTelemetry request spans, received by the coordinator and joined to the requests. */
export const TracesSpec = closed(
  {
    http: Type.Optional(
      listenAddress(`Where the coordinator takes OTLP/HTTP (POST /v1/traces, protobuf or JSON); default ${TRACES_DEFAULTS.http}.`),
    ),
    grpc: Type.Optional(listenAddress(`Where the coordinator takes OTLP/gRPC (TraceService/Export); default ${TRACES_DEFAULTS.grpc}.`)),
    flush_s: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 600,
        default: TRACES_DEFAULTS.flush_s,
        description:
          "Seconds the run waits at most after its last request for the server's span exports (exporters batch, every 5 s by default).",
      }),
    ),
  },
  {
    description:
      "Receive the server's per-request spans (vLLM/SGLang --otlp-traces-endpoint) and join them to the requests: every request carries a W3C traceparent naming it.",
  },
);

/**
 * Which request records the agents send (docs/relay-tier.md): every one, or a sample, for fleets
 * past what one coordinator ingests. Each agent counts every request itself and spools every
 * record either way; histograms always cover every request.
 */
export const RecordsSpec = Type.Union(
  [
    Type.Literal('all', { description: 'Every request record goes to the coordinator (the default).' }),
    closed({
      sample_every: Type.Integer({
        minimum: 2,
        maximum: 1_000_000,
        description:
          "Each agent sends the record of a request when floor(request_index / agents) mod sample_every = 0 (every sample_every-th request of its share, its first included) and keeps every record in its spool; counts, goodput and SLO verdicts come from the agents' own counts and the merged histograms.",
      }),
    }),
  ],
  { description: 'Request records sent to the coordinator: "all" (default) or { "sample_every": K }.' },
);

/** A whole plan file. */
export const PlanFile = say(
  fileRoot(
    {
      schema: Type.Literal(PLAN_SCHEMA),
      name: nameField(128),
      seed: Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'seed + plan ⇒ one arrival schedule, identical for any number of agents.',
      }),
      // One day: longer runs are almost certainly a unit mistake (ms for s).
      duration_s: Type.Number({ exclusiveMinimum: 0, maximum: 86_400 }),
      drain_timeout_s: Type.Optional(
        Type.Number({
          minimum: 0,
          default: PLAN_DEFAULTS.drain_timeout_s,
          description: 'Seconds after duration_s that requests in flight may finish.',
        }),
      ),
      max_error_share: Type.Optional(
        share('Share of failed requests above which the run is `degraded`.', { default: PLAN_DEFAULTS.max_error_share }),
      ),
      target: Type.Optional(Target),
      classes: Type.Array(TrafficClass, { minItems: 1 }),
      windows: Type.Optional(Type.Array(Window, { description: 'Named analysis windows; the whole run is always the window `all`.' })),
      scrape: Type.Optional(Type.Array(ScrapeTarget, { description: 'Prometheus endpoints scraped during the run.' })),
      abort: Type.Optional(AbortRules),
      records: Type.Optional(RecordsSpec),
      cost: Type.Optional(CostSpec),
      traces: Type.Optional(TracesSpec),
    },
    { title: PLAN_SCHEMA, description: 'A load plan: seeded traffic classes against one OpenAI-compatible target.' },
  ),
  // The coordinator sizes prompts against the target itself; a plan that carried sizes would skip that.
  {
    unknown: {
      prompt_calibration: 'is written by the coordinator, not in a plan',
      prompt_vocabulary: 'is written by the coordinator, not in a plan',
      prompt_vocabularies: 'is written by the coordinator, not in a plan',
    },
  },
);
