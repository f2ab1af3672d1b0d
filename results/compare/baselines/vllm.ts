// Pure: a `vllm bench serve --save-result` JSON as a baseline. With --save-detailed it holds every
// request (ttfts, itls, output_lens, errors, in seconds, in the order the requests were issued;
// start_times in newer releases); without it, the aggregate figures only (mean/median/std/pNN of
// ttft, tpot, itl and e2el in ms, over successful requests, numpy's interpolated percentiles).
import type { BaselineMetric, FigureSource, ForeignBaseline, ForeignRequest } from './types.js';
import { Problems } from './types.js';

const METRIC: Record<string, BaselineMetric> = { ttft: 'ttft', tpot: 'tpot', itl: 'itl', e2el: 'e2e' };
const PCT_KEY = /^(mean|median|std|p(\d+(?:\.\d+)?))_(ttft|tpot|itl|e2el)_ms$/;

/** Whether a parsed document looks like vLLM's result JSON. */
export function looksLikeVllm(doc: unknown): boolean {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return false;
  const d = doc as Record<string, unknown>;
  const keys = Object.keys(d);
  return ('backend' in d || 'endpoint_type' in d) && (keys.some((k) => PCT_KEY.test(k)) || 'ttfts' in d);
}

function figures(perRequest: boolean, hasLatencies: boolean): FigureSource[] {
  const at = (detailed: string, agg: string) => (perRequest ? detailed : agg);
  return [
    {
      figure: 'ttft',
      source: at('$.ttfts[i]', '$.median_ttft_ms, $.pNN_ttft_ms'),
      conversion: at('s × 1000', 'ms as written'),
      comparable: 'close',
      note: "vLLM stamps the first streamed chunk that carries a choice, even an empty role-only delta, so its TTFT can fall slightly before loadfleet's first content token",
    },
    {
      figure: 'tpot',
      source: at('($.latencies[i] − $.ttfts[i]) / ($.output_lens[i] − 1)', '$.median_tpot_ms, $.pNN_tpot_ms'),
      conversion: at('s × 1000', 'ms as written'),
      comparable: 'same',
      note: "both exclude the first token: (last token − first token) / (output tokens − 1), output tokens from the server's usage (or vLLM's tokenizer); requests of one output token have none",
    },
    {
      figure: 'e2e',
      source: at(hasLatencies ? '$.latencies[i]' : '$.ttfts[i] + Σ $.itls[i][j]', '$.median_e2el_ms, $.pNN_e2el_ms'),
      conversion: at('s × 1000', 'ms as written'),
      comparable: 'close',
      note: 'vLLM ends a request at its last chunk with a choice (before the usage chunk and [DONE]); loadfleet at [DONE], a few ms later at most',
    },
    {
      figure: 'itl',
      source: at('$.itls[i][j] pooled over successful requests', '$.median_itl_ms, $.pNN_itl_ms'),
      conversion: at('s × 1000', 'ms as written'),
      comparable: 'same',
      note: 'gaps between consecutive streamed chunks pooled over requests, as loadfleet records them (a chunk may hold several tokens)',
    },
    {
      figure: 'success_rate',
      source: at('$.errors[i] (empty: success)', '$.completed / ($.completed + $.failed)'),
      conversion: 'share',
      comparable: 'same',
      note: 'a request counts as failed when vLLM recorded an error or never received a first chunk',
    },
  ];
}

/** The baseline, or the problems that make the file unreadable as one. */
export function readVllm(doc: Record<string, unknown>): ForeignBaseline | { problems: string[] } {
  const p = new Problems();
  const completed = p.num(doc.completed, '$.completed');
  const failedField = p.num(doc.failed, '$.failed', true);
  const prompts = p.num(doc.num_prompts, '$.num_prompts', true);
  p.num(doc.duration, '$.duration');
  const aggregate: ForeignBaseline['aggregate'] = {};
  for (const [k, v] of Object.entries(doc)) {
    const m = PCT_KEY.exec(k);
    if (!m || m[1] === 'mean' || m[1] === 'std') continue;
    const value = p.num(v, `$.${k}`);
    if (value === null) continue;
    const metric = METRIC[m[3]!]!;
    const q = m[1] === 'median' ? 0.5 : Number(m[2]) / 100;
    if (!aggregate[metric]) aggregate[metric] = new Map();
    aggregate[metric].set(q, value);
  }
  const detailed = doc.ttfts !== undefined || doc.errors !== undefined;
  let requests: ForeignRequest[] | null = null;
  let itlGaps: number[] | null = null;
  let order: ForeignBaseline['order'] = null;
  const hasLatencies = Array.isArray(doc.latencies);
  if (detailed) {
    const ttfts = p.arr(doc.ttfts, '$.ttfts');
    const errors = p.arr(doc.errors, '$.errors');
    const outs = p.arr(doc.output_lens, '$.output_lens');
    const itls = p.arr(doc.itls, '$.itls', hasLatencies);
    const lat = hasLatencies ? (doc.latencies as unknown[]) : null;
    const starts = p.arr(doc.start_times, '$.start_times', true);
    const n = ttfts?.length ?? 0;
    for (const [name, a] of [
      ['errors', errors],
      ['output_lens', outs],
      ['itls', itls],
      ['latencies', lat],
      ['start_times', starts],
    ] as const)
      if (a && a.length !== n) p.add(`$.${name}`, `${a.length} entries, but $.ttfts has ${n}: the lists must run over the same requests`);
    // Every entry is checked even when the lists disagree in length, so a malformed file is refused with all its problems.
    if (ttfts && errors && outs) {
      requests = [];
      itlGaps = [];
      for (let i = 0; i < n; i++) {
        const err = errors[i];
        if (i < errors.length && typeof err !== 'string' && err !== null)
          p.add(`$.errors[${i}]`, `expected a string, got ${JSON.stringify(err)}`);
        const ttft = p.num(ttfts[i], `$.ttfts[${i}]`);
        const out = i < outs.length ? p.num(outs[i], `$.output_lens[${i}]`) : null;
        const gaps = itls && i < itls.length ? p.arr(itls[i], `$.itls[${i}]`) : null;
        const gapSum = gaps ? gaps.reduce<number>((s, g, j) => s + (p.num(g, `$.itls[${i}][${j}]`) ?? 0), 0) : 0;
        const latency = lat ? (i < lat.length ? p.num(lat[i], `$.latencies[${i}]`) : null) : ttft === null ? null : ttft + gapSum;
        const at = starts ? (i < starts.length ? p.num(starts[i], `$.start_times[${i}]`) : null) : i;
        // A request that never got a first chunk has ttft 0 and may carry an empty error (an HTTP reason that was blank).
        const ok = (err === '' || err === null) && ttft !== null && ttft > 0;
        if (ok && gaps) for (const g of gaps) if (typeof g === 'number') itlGaps.push(g * 1000);
        requests.push({
          at,
          ok,
          ttft: ok && ttft !== null ? ttft * 1000 : null,
          tpot: ok && latency !== null && ttft !== null && out !== null && out > 1 ? ((latency - ttft) / (out - 1)) * 1000 : null,
          e2e: ok && latency !== null ? latency * 1000 : null,
        });
      }
      order = starts ? 'send-time' : 'file-order-is-send-order';
      if (!itls) itlGaps = null;
    }
  } else if (Object.keys(aggregate).length === 0) {
    p.add('$', 'neither per-request lists (ttfts, errors: --save-detailed) nor aggregate figures (median_ttft_ms, p99_ttft_ms …)');
  }
  if (p.list.length > 0) return { problems: p.list };
  const failed = requests
    ? requests.filter((r) => !r.ok).length
    : (failedField ?? (prompts !== null && completed !== null ? prompts - completed : null));
  const total = requests ? requests.length : completed !== null && failed !== null ? completed + failed : null;
  const perRequest = requests !== null;
  return {
    format: 'vllm',
    ttftEnds: 'first_output',
    tool: 'vLLM bench serve',
    version: typeof doc.vllm_version === 'string' ? doc.vllm_version : null,
    data: perRequest ? 'per-request' : 'aggregate',
    order,
    requests,
    itlGaps,
    aggregate,
    total,
    failed,
    excluded: null,
    figures: figures(perRequest, hasLatencies),
    load: {
      backend: doc.backend ?? doc.endpoint_type ?? null,
      model_id: doc.model_id ?? null,
      num_prompts: prompts,
      request_rate: doc.request_rate ?? null,
      burstiness: doc.burstiness ?? null,
      max_concurrency: doc.max_concurrency ?? null,
      mean_input_tokens: typeof doc.total_input_tokens === 'number' && completed ? doc.total_input_tokens / completed : null,
      mean_output_tokens: typeof doc.total_output_tokens === 'number' && completed ? doc.total_output_tokens / completed : null,
      date: doc.date ?? null,
    },
    limits: perRequest
      ? []
      : [
          "vLLM's aggregate percentiles are numpy's linear interpolation between ranks, not loadfleet's nearest rank: they differ by at most the gap between two neighbouring requests",
        ],
  };
}
