// Pure: a starter plan for an endpoint the doctor has seen — the seed study's two classes (a
// realtime class arriving while batch work already runs, domain.md §8) scaled to the rate the user
// gives and the duration they want, the target as the doctor found it, the serving metrics it
// found to scrape, SLO bounds to edit — written as YAML with a comment on each part saying what it
// is and what to change. The plan is validated before it is written (main.ts).
import { Document, isMap, type Node, type Pair, type Scalar } from 'yaml';
import type { Plan, ScrapeTarget, TrafficClass } from '../../shared/plan.js';
import { PLAN_SCHEMA } from '../../shared/plan-schema.js';
import type { DoctorReport } from './classify.js';

/** What the user chose for the plan. */
export interface StarterOptions {
  /** Mean arrival rate of the realtime class, requests/s; batch runs at the seed's ratio to it. */
  rate: number;
  durationS: number;
  apiKeyEnv?: string;
  /** How the user runs loadfleet here (`loadfleet`, or `./loadfleet` in a clone). */
  command: string;
  /** The plan's path as the user will pass it to `coordinator start`. */
  planPath: string;
  /** `$schema` value: the published schema's path relative to the plan (JSON), or for the YAML modeline. */
  schemaRef: string;
}

// The seed's short plan (examples/batch-interference-short.plan.json), as fractions of its 60 s:
// batch 0–45 s, realtime 15–45 s, windows baseline 5–14, surge 20–40, recovery 47–58; realtime
// around 3 req/s, batch around 2.75.
const SEED_S = 60;
const BATCH_TO_REALTIME = 2.75 / 3;
const SEED_TOKENS = { realtime: { input: 4096, output: 128 }, batch: { input: 20_000, output: 128 } };
const GATEWAY_HEADERS = {
  realtime: { 'x-gateway-inference-objective': 'premium', 'x-gateway-inference-fairness-id': 'realtime-chat' },
  batch: { 'x-gateway-inference-objective': 'batch', 'x-gateway-inference-fairness-id': 'batch-long-context' },
};

/** The command that runs the plan. */
export function runCommand(o: StarterOptions): string {
  return `${o.command} coordinator start --plan ${o.planPath} --agents 2`;
}

/** Prompt lengths: the seed's, or shrunk to fit a context the endpoint states. */
export function classTokens(maxModelLen: number | null): typeof SEED_TOKENS {
  if (maxModelLen === null || maxModelLen >= SEED_TOKENS.batch.input + SEED_TOKENS.batch.output + 64) return SEED_TOKENS;
  // A tenth of the context stays free for the chat template and the unique head.
  const batch = Math.max(16, Math.floor(maxModelLen * 0.9) - SEED_TOKENS.batch.output);
  return {
    realtime: { input: Math.max(16, Math.min(SEED_TOKENS.realtime.input, Math.floor(batch / 5))), output: 128 },
    batch: { input: batch, output: 128 },
  };
}

const at = (fraction: number, durationS: number) => Math.round(fraction * durationS * 10) / 10;
const rate2 = (x: number) => Math.round(x * 1000) / 1000;

/** The plan itself (a valid `loadfleet.plan/v1` document once validated). */
export function starterPlan(r: DoctorReport, o: StarterOptions): Plan {
  const d = o.durationS;
  const gateway = r.metrics.some((m) => m.stacks.includes('gateway'));
  const tokens = classTokens(r.models.max_model_len);
  const ignoreEos = !(r.preferred_api !== null && r.apis[r.preferred_api]?.ignore_eos === 'refused');
  const batchRate = o.rate * BATCH_TO_REALTIME;
  const cls = (name: 'realtime' | 'batch', priority: number, center: number, period: number, from: number, to: number): TrafficClass => ({
    name,
    priority,
    ...(gateway && { headers: GATEWAY_HEADERS[name] }),
    prompt: { input_tokens: tokens[name].input, output_tokens: tokens[name].output, ignore_eos: ignoreEos, cache: 'unique' },
    load: {
      model: 'poisson',
      phases: [
        {
          start_s: at(from / SEED_S, d),
          duration_s: at((to - from) / SEED_S, d),
          rate: {
            pattern: 'noisy-sinusoidal',
            center: rate2(center),
            amplitude: rate2(center * 0.2),
            period_s: period,
            noise: rate2(center * 0.1),
            ...(name === 'realtime' && { spike_probability: 0.02 }),
          },
        },
      ],
    },
    slo: name === 'realtime' ? { ttft_p95_ms: 250, success_rate_min: 0.99 } : { success_rate_min: 0.99 },
  });
  const scrape: ScrapeTarget[] = r.metrics
    .filter((m) => m.ok && m.stacks.length > 0)
    .map((m, i) => ({
      name: `${m.stacks
        .join('-')
        .toLowerCase()
        .replace(/[^a-z0-9.-]/g, '')}${i === 0 ? '' : `-${i + 1}`}`,
      url: m.url,
      interval_s: 1,
    }));
  const host = new URL(r.base_url).hostname.replace(/[^A-Za-z0-9.-]/g, '-');
  return {
    schema: PLAN_SCHEMA,
    name: `starter-${host}`.slice(0, 128),
    seed: 42,
    duration_s: d,
    drain_timeout_s: 60,
    target: {
      base_url: r.base_url,
      api: r.preferred_api ?? 'chat',
      model: r.model ?? 'MODEL',
      ...(o.apiKeyEnv && { api_key_env: o.apiKeyEnv }),
      timeout_s: 120,
    },
    classes: [cls('realtime', 100, o.rate, 9.25, 15, 45), cls('batch', -10, batchRate, 7.75, 0, 45)],
    windows: [
      { name: 'baseline', start_s: at(5 / SEED_S, d), end_s: at(14 / SEED_S, d) },
      { name: 'surge', start_s: at(20 / SEED_S, d), end_s: at(40 / SEED_S, d) },
      { name: 'recovery', start_s: at(47 / SEED_S, d), end_s: at(58 / SEED_S, d) },
    ],
    ...(scrape.length > 0 && { scrape }),
  } as Plan;
}

/** The plan as JSON text, naming the published schema. */
export function starterJson(plan: Plan, o: StarterOptions): string {
  return `${JSON.stringify({ $schema: o.schemaRef, ...plan }, null, 2)}\n`;
}

/** The plan as YAML text with comments: what each part is, what to edit, and the command to run it. */
export function starterYaml(plan: Plan, r: DoctorReport, o: StarterOptions): string {
  const doc = new Document(plan);
  const key = (path: (string | number)[], text: string) => {
    const parent = doc.getIn(path.slice(0, -1), true) as Node | undefined;
    if (!isMap(parent)) return;
    const pair = parent.items.find((p) => (p.key as Scalar).value === path.at(-1)) as Pair<Scalar> | undefined;
    if (pair) pair.key.commentBefore = ` ${text.replace(/\n/g, '\n ')}`;
  };
  const tokenizeLine = r.tokenize?.dialect
    ? `prompts are sized on the server's own /tokenize (${r.tokenize.dialect} dialect)`
    : "no tokenize endpoint was found: add `tokenizer: /path/to/tokenizer.json` (the model's Hugging Face file) for exact prompt\nlengths, else prompts are one filler word per token (words-unverified)";
  doc.commentBefore = [
    ` yaml-language-server: $schema=${o.schemaRef}`,
    ` A starter plan written by \`loadfleet doctor\` for ${r.base_url} (${r.verdict}).`,
    ` The seed study's shape: batch work already running when a realtime class arrives, scaled to`,
    ` ${o.rate} req/s of realtime over ${o.durationS} s. Edit the classes, rates and SLO bounds, then run it:`,
    ...(o.apiKeyEnv ? [`   export ${o.apiKeyEnv}=...   # on every machine that runs an agent`] : []),
    `   ${runCommand(o)}`,
    ' The schema above describes every field (an editor with YAML support shows it).',
  ].join('\n');
  key(['seed'], 'seed + plan give one arrival schedule, the same for any number of agents.');
  key(['target'], `Where requests go: ${tokenizeLine}.`);
  key(
    ['classes'],
    "Traffic classes. Lengths are the seed study's (shrunk to fit a context the server states); rates are\nnoisy-sinusoidal Poisson arrivals around `center` req/s.",
  );
  key(['classes', 0, 'slo'], 'The realtime SLO: p95 time to first token and success rate. The run says met / missed per window.');
  key(['classes', 1, 'load'], "Batch runs from the start, at the seed's ratio to realtime (2.75 : 3).");
  if (plan.classes[0]?.headers)
    key(['classes', 0, 'headers'], 'Gateway metrics were found: these headers pick the flow-control priority band and fairness id.');
  if (plan.classes[0]?.prompt.ignore_eos === false)
    key(['classes', 0, 'prompt'], 'The server refuses ignore_eos, so answers may end before output_tokens.');
  key(['windows'], 'Analysis windows (seconds from the start): before, during and after the realtime surge.');
  if (plan.scrape) key(['scrape'], 'Serving metrics the doctor found; the run records them beside the client figures.');
  else
    doc.comment =
      ' No serving metrics were found. To record the server side, add e.g.\n scrape: [{name: vllm, url: "http://HOST:8000/metrics", interval_s: 1}]';
  return doc.toString({ lineWidth: 0 });
}
