// Writes a run directory's llm-d Benchmark Reports (benchmark-report.yaml and .json, and one pair
// per class when the run has several) from what the directory holds: run.json's exact per-class
// figures, histograms.hlog merged across classes for the whole run (HDR add, never an average of
// percentiles), and requests.ndjson streamed once for token lengths and request sizes.
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { stringify } from 'yaml';
import { writeFileAtomic } from '../shared/atomic-file.js';
import { addEncoded, type Histogram, newHistogram, percentilesNs } from '../shared/histogram.js';
import type { TrafficClass } from '../shared/plan.js';
import { readRunJson } from '../shared/run-read.js';
import type { RunJson, RunJsonClass } from '../shared/run-schema.js';
import { VERSION } from '../shared/version.js';
import {
  BR_LATENCY,
  BR_PERCENTILES,
  type BrScope,
  type BrStatistics,
  benchmarkReport,
  rateStats,
  sequenceLength,
  statsFromCounts,
  statsFromWindow,
} from './benchmark-report.js';

/** The report's file name (with .yaml and .json); a class's own report adds `.<class>`. */
export const BENCHMARK_REPORT_FILE = 'benchmark-report';

/** What each loadfleet figure in a report means, carried in its native part. */
const DEFINITIONS: Record<string, string> = {
  'results.request_performance.aggregate.latency':
    "successful requests only, as the standard's latency figures are (ms; TTFT from the request being sent to its first content token): per class the exact figures of run.json classes.<c>.windows.all, for the whole run every class merged from histograms.hlog by HDR add, 3 significant digits; failed requests are in requests.failures, and loadfleet's SLO verdicts (slo_verdicts here) rank them +∞, so a verdict can be missed on failures while these percentiles look fast",
  'results.request_performance.aggregate.requests.total': 'requests dispatched, every status',
  'results.request_performance.aggregate.requests.failures':
    'requests that ended in any status but ok (429, 5xx, timeout, reset, malformed stream)',
  'results.request_performance.aggregate.requests.incomplete':
    'requests dispatched that neither completed nor failed (cut by the end of the run)',
  'results.request_performance.aggregate.requests.input_length':
    "prompt tokens of successful requests, from the server's usage (or the tokenizer), exact nearest-rank percentiles",
  'results.request_performance.aggregate.requests.output_length': 'output tokens of successful requests, exact nearest-rank percentiles',
  'results.request_performance.aggregate.requests.request_size': 'request body bytes (classes with images)',
  'results.request_performance.aggregate.throughput':
    'one figure over the whole run, drain included: completed requests, output tokens and prompt tokens of completed requests per second (the same basis as run.json throughput_rps)',
  'scenario.load.standardized.rate_qps': 'requests dispatched per second of the plan duration (open-loop classes only)',
  cost: "run.json cost, whole: cost per million tokens and tokens/s per accelerator and per user by window and class, with each figure's definition in run.json field_definitions (the standard has no place for a price)",
};

/** run.json as the report reads it. */
type RunDoc = RunJson;

/** Writes the reports of a run directory; returns the paths written. */
export async function writeBenchmarkReports(dir: string): Promise<string[]> {
  const run = await readRunJson(dir);
  const classes = Object.keys(run.classes);
  const [tallies, merged] = await Promise.all([tallyRequests(join(dir, 'requests.ndjson')), mergeHlog(join(dir, 'histograms.hlog'))]);
  const scopes: [string, BrScope][] = [[BENCHMARK_REPORT_FILE, wholeRunScope(run, classes, tallies, merged)]];
  if (classes.length > 1) for (const c of classes) scopes.push([`${BENCHMARK_REPORT_FILE}.${c}`, classScope(run, c, tallies.get(c))]);
  const written: string[] = [];
  for (const [name, scope] of scopes) {
    const doc = plainNumbers(benchmarkReport(scope));
    await writeFileAtomic(join(dir, `${name}.yaml`), stringify(doc, { aliasDuplicateObjects: false }));
    await writeFileAtomic(join(dir, `${name}.json`), `${JSON.stringify(doc, null, 2)}\n`);
    written.push(join(dir, `${name}.yaml`), join(dir, `${name}.json`));
  }
  return written;
}

/**
 * The run directories at or under `dir` (a run, a sweep with its stages, an experiment with its
 * runs), found by their run.json, a few levels down at most.
 */
export async function runDirsUnder(dir: string, depth = 3): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  if (entries.some((e) => e.isFile() && e.name === 'run.json')) return [dir];
  if (depth === 0) return [];
  const nested = await Promise.all(entries.filter((e) => e.isDirectory()).map((e) => runDirsUnder(join(dir, e.name), depth - 1)));
  return nested.flat().sort();
}

/**
 * run.json is read exactly (ns integers past 2^53 as bigint); YAML and JSON readers of the standard
 * expect plain numbers, so a bigint becomes a number where it is exact and a decimal string where not.
 */
function plainNumbers<T>(doc: T): T {
  return JSON.parse(
    JSON.stringify(doc, (_key, v) => (typeof v === 'bigint' ? (Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()) : v)),
  ) as T;
}

/** Token lengths and request sizes of successful requests, per class, as value → count. */
interface Tally {
  input: Map<number, number>;
  output: Map<number, number>;
  bytes: Map<number, number>;
  promptTokens: number;
}

const newTally = (): Tally => ({ input: new Map(), output: new Map(), bytes: new Map(), promptTokens: 0 });
const bump = (m: Map<number, number>, v: unknown): void => {
  if (typeof v === 'number' && Number.isFinite(v)) m.set(v, (m.get(v) ?? 0) + 1);
};

async function tallyRequests(path: string): Promise<Map<string, Tally>> {
  const out = new Map<string, Tally>();
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line.length === 0) continue;
    const r = JSON.parse(line) as Record<string, unknown>;
    if (r.status !== 'ok' || typeof r.class !== 'string') continue;
    const t = out.get(r.class) ?? newTally();
    out.set(r.class, t);
    bump(t.input, r.prompt_tokens);
    bump(t.output, r.completion_tokens);
    bump(t.bytes, r.request_bytes);
    if (typeof r.prompt_tokens === 'number') t.promptTokens += r.prompt_tokens;
  }
  return out;
}

/** Every class's interval histograms of each metric added into one histogram per metric. */
async function mergeHlog(path: string): Promise<Map<string, Histogram>> {
  const out = new Map<string, Histogram>();
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (!line.startsWith('Tag=')) continue;
    const fields = line.split(',');
    const metric = fields[0]!.slice(fields[0]!.lastIndexOf('/') + 1);
    const h = out.get(metric) ?? newHistogram();
    out.set(metric, h);
    addEncoded(h, fields[4]!);
  }
  return out;
}

function statsFromHistogram(h: Histogram | undefined): BrStatistics | null {
  if (!h || h.totalCount === 0) return null;
  const ms = (ns: number): number => Math.round(ns) / 1e6;
  const ps = percentilesNs(
    h,
    BR_PERCENTILES.map(([, q]) => q),
  );
  const s: BrStatistics = { units: 'ms', mean: ms(h.mean), stddev: ms(h.stdDeviation), min: ms(h.minNonZeroValue), max: ms(h.maxValue) };
  BR_PERCENTILES.forEach(([key], i) => {
    (s as unknown as Record<string, number>)[key] = ms(ps[i]!);
  });
  return s;
}

const mergeCounts = (maps: Map<number, number>[]): Map<number, number> => {
  const out = new Map<number, number>();
  for (const m of maps) for (const [v, n] of m) out.set(v, (out.get(v) ?? 0) + n);
  return out;
};

const OPEN_LOOP = new Set(['constant-rate', 'poisson', 'trace', 'sessions']);

/** The parts every scope shares: the run's identity, time, plan and evidence. */
function common(
  run: RunDoc,
  classNames: readonly string[],
  t: Tally[],
): Omit<BrScope, 'uid' | 'total' | 'failures' | 'incomplete' | 'latency' | 'throughput'> {
  const cls: TrafficClass[] = run.plan.classes.filter((c) => classNames.includes(c.name));
  const input = mergeCounts(t.map((x) => x.input));
  const output = mergeCounts(t.map((x) => x.output));
  const bytes = mergeCounts(t.map((x) => x.bytes));
  const inputLength = statsFromCounts(input, 'count');
  const outputLength = statsFromCounts(output, 'count');
  const one = cls.length === 1 ? cls[0] : null;
  const openLoop = cls.every((c) => OPEN_LOOP.has(c.load.model));
  const concurrency = cls.every((c) => c.load.model === 'concurrency')
    ? cls.reduce((n, c) => n + Math.max(...c.load.phases.map((p) => Number(p.concurrency) || 0)), 0)
    : null;
  const sessions = one?.load.model === 'sessions' ? sequenceLength(one.load.session?.turns, null) : null;
  const dispatched = classNames.reduce((n, c) => n + (run.classes[c]?.requests ?? 0), 0);
  return {
    eid: run.experiment?.name ?? null,
    description: `loadfleet plan ${run.plan.name}${one ? `, class ${one.name}` : ''}${
      run.experiment ? `, experiment ${run.experiment.name} arm ${run.experiment.arm} repeat ${run.experiment.repeat}` : ''
    }`,
    startIso: run.started_at,
    endIso: run.finished_at,
    durationMs: Number(run.wall_clock_ms),
    agents: Array.isArray(run.agents) ? run.agents.length : 1,
    toolVersion: VERSION,
    planSha256: run.plan_sha256,
    source: cls.some((c) => c.load.model === 'trace' || c.prompt?.dataset) ? 'sampled' : 'random',
    inputSeqLen: (one && sequenceLength(one.prompt?.input_tokens, inputLength?.mean ?? null)) ?? {
      distribution: 'other',
      value: inputLength?.mean ?? 0,
    },
    outputSeqLen: one
      ? sequenceLength(one.prompt?.output_tokens, outputLength?.mean ?? null)
      : outputLength && { distribution: 'other', value: outputLength.mean },
    rateQps: openLoop && run.plan.duration_s > 0 ? dispatched / run.plan.duration_s : null,
    concurrency,
    maxTurns: sessions,
    inputLength,
    outputLength,
    requestSize: statsFromCounts(bytes, 'bytes'),
    native: {
      run_id: run.run_id,
      status: run.status,
      status_reason: run.status_reason ?? null,
      clock: run.clock,
      data_quality: run.data_quality,
      slo_proof: run.slo_proof,
      slo_verdicts: Object.fromEntries(classNames.map((c) => [c, run.classes[c]?.slo_verdict ?? null])),
      records: run.records,
      cost: run.cost ?? null,
      definitions: DEFINITIONS,
    },
  };
}

function counts(c: Pick<RunJsonClass, 'requests' | 'completed' | 'failed'>): Pick<BrScope, 'total' | 'failures' | 'incomplete'> {
  const total = Number(c.requests ?? 0);
  const failures = Number(c.failed ?? 0);
  return { total, failures, incomplete: Math.max(0, total - Number(c.completed ?? 0) - failures) };
}

function wholeRunScope(run: RunDoc, classes: readonly string[], tallies: Map<string, Tally>, merged: Map<string, Histogram>): BrScope {
  const windows = classes.map((c) => allWindow(run, c));
  const sum = (f: string): number | null =>
    windows.every((w) => typeof w[f] === 'number') ? windows.reduce((n, w) => n + (w[f] as number), 0) : null;
  const t = classes.map((c) => tallies.get(c) ?? newTally());
  const lengthS = Number(run.wall_clock_ms) / 1000;
  return {
    ...common(run, classes, t),
    uid: run.run_id,
    ...counts(run),
    latency: Object.fromEntries(BR_LATENCY.map(([name, metric]) => [name, statsFromHistogram(merged.get(metric))])),
    throughput: {
      request_rate: rateStats(sum('throughput_rps'), 'queries/s'),
      output_token_rate: rateStats(sum('throughput_tok_s'), 'tokens/s'),
      input_token_rate: rateStats(lengthS > 0 ? t.reduce((n, x) => n + x.promptTokens, 0) / lengthS : null, 'tokens/s'),
    },
  };
}

/** A class's whole-run window (empty when the class has none). */
const allWindow = (run: RunDoc, c: string): Record<string, unknown> => run.classes[c]?.windows.all ?? {};
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

function classScope(run: RunDoc, c: string, tally: Tally | undefined): BrScope {
  const w = allWindow(run, c);
  const t = tally ?? newTally();
  const lengthS = Number(run.wall_clock_ms) / 1000;
  return {
    ...common(run, [c], [t]),
    uid: `${run.run_id}/${c}`,
    ...counts(run.classes[c] ?? { requests: 0, completed: 0, failed: 0 }),
    latency: Object.fromEntries(BR_LATENCY.map(([name, metric]) => [name, statsFromWindow(w, metric)])),
    throughput: {
      request_rate: rateStats(num(w.throughput_rps), 'queries/s'),
      output_token_rate: rateStats(num(w.throughput_tok_s), 'tokens/s'),
      input_token_rate: rateStats(lengthS > 0 ? t.promptTokens / lengthS : null, 'tokens/s'),
    },
  };
}
