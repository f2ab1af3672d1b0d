// The comparison's only I/O on the way in: a run directory (run.json + requests.ndjson) or an
// experiment directory (its finished runs of one arm) becomes the pure comparison's RunSamples.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { meetsSlo } from '../../figures/window-stats.js';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import { parseExact } from '../../shared/json.js';
import type { OutputTokenSource, RequestRecord, RequestStatus } from '../../shared/metrics.js';
import { blankRecord, metricNs } from '../../shared/metrics.js';
import type { Plan } from '../../shared/plan.js';
import { sloTtftMetric } from '../../shared/plan.js';
import { readRunJson } from '../../shared/run-read.js';
import { isFinished, RECORD_FILE, readExperimentDir } from '../experiment-record.js';
import { nearestRank } from './bootstrap.js';
import { quantileKey, sloFigure } from './figure-keys.js';
import type { RequestMetric, RunSample, WindowSample } from './figures.js';
import { COMPARED_QUANTILES, REQUEST_METRICS } from './figures.js';

/** One side of a comparison: its runs and a label for people. */
export interface Side {
  label: string;
  runs: RunSample[];
  /** The run directories read. */
  dirs: string[];
}

function inputError(message: string): LoadfleetError {
  return new LoadfleetError(ErrorCode.REPORT_INPUT, message, { exitCode: ExitCode.INVALID_INPUT });
}

/** A run directory, or an experiment directory's finished runs (of `arm`, needed when it has several). */
export async function loadSide(dir: string, arm?: string): Promise<Side> {
  if (existsSync(join(dir, 'run.json'))) return { label: dir, runs: [await loadRun(dir)], dirs: [dir] };
  if (!existsSync(join(dir, RECORD_FILE)))
    throw inputError(`${dir} is neither a run directory (run.json) nor an experiment directory (${RECORD_FILE})`);
  const { manifest } = await readExperimentDir(dir);
  const done = manifest.runs.filter((s) => isFinished(s) && s.run_dir !== null && s.status !== 'aborted');
  const arms = [...new Set(done.map((s) => s.arm))];
  const chosen = arm ?? (arms.length === 1 ? arms[0] : undefined);
  if (chosen === undefined)
    throw inputError(`${dir} holds runs of ${arms.length === 0 ? 'no arm' : `arms ${arms.join(', ')}`}: name one with --arm`);
  const dirs = done.filter((s) => s.arm === chosen).map((s) => resolve(dir, s.run_dir!));
  if (dirs.length === 0) throw inputError(`${dir} holds no finished run of arm ${chosen}`);
  return { label: `${dir} (arm ${chosen}, ${dirs.length} runs)`, runs: await Promise.all(dirs.map(loadRun)), dirs };
}

interface Row {
  class: string;
  status: RequestStatus;
  intended_unix_ns: bigint | number | null;
  sent_unix_ns: bigint | number | null;
  first_output_unix_ns: bigint | number | null;
  first_content_unix_ns: bigint | number | null;
  first_content_uncertainty_ns?: number | null;
  done_unix_ns: bigint | number | null;
  completion_tokens: number | null;
  output_token_source: OutputTokenSource | null;
}

/** One request of a window, as the comparison reads it. */
interface Point {
  at: number;
  /** ms; +∞ for a failed request, null when a successful one lacks the metric (e.g. TPOT of one token). */
  m: Record<RequestMetric, number | null>;
  ok: boolean;
  good: boolean;
  /** ms from the actual send to the first content token and to the first output of any kind (reasoning included); +∞ when failed. */
  fromSend: { content: number | null; output: number | null };
  /** ms: how late the first content token may have been stamped (null when not carried). */
  uncertainty: number | null;
}

interface Acc {
  points: Point[];
  good: number;
}

/** One run directory. */
export async function loadRun(dir: string): Promise<RunSample> {
  const run = await readRunJson(dir);
  const plan: Plan = run.plan;
  const start = BigInt(run.started_at_unix_ns);
  const windows = [
    { name: 'all', startNs: 0, endNs: Number.POSITIVE_INFINITY },
    ...(plan.windows ?? []).map((w) => ({ name: w.name, startNs: w.start_s * 1e9, endNs: w.end_s * 1e9 })),
  ];
  const acc = new Map<string, Map<string, Acc>>();
  for (const cls of plan.classes) acc.set(cls.name, new Map(windows.map((w) => [w.name, { points: [], good: 0 }])));
  const slo = new Map(plan.classes.map((c) => [c.name, c.slo]));
  const rel = (v: bigint | number | null): number | null => (v === null ? null : Number(BigInt(v) - start));
  const lines = createInterface({ input: createReadStream(join(dir, 'requests.ndjson'), 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const row = parseExact<Row>(line);
    const byWindow = acc.get(row.class);
    if (!byWindow) continue;
    const r: RequestRecord = {
      ...blankRecord(row.class, 0, rel(row.intended_unix_ns)),
      status: row.status,
      sent_ns: rel(row.sent_unix_ns) ?? 0,
      first_output_ns: rel(row.first_output_unix_ns),
      first_content_ns: rel(row.first_content_unix_ns),
      done_ns: rel(row.done_unix_ns),
      completion_tokens: row.completion_tokens,
      output_token_source: row.output_token_source,
    };
    const at = r.intended_ns ?? r.sent_ns;
    const s = slo.get(row.class);
    const ok = r.status === 'ok';
    const fromSend = {
      content: ok ? nsToMs(metricNs(r, 'ttft')) : Number.POSITIVE_INFINITY,
      output: ok ? nsToMs(metricNs(r, 'ttfo')) : Number.POSITIVE_INFINITY,
    };
    const uncertainty = ok && typeof row.first_content_uncertainty_ns === 'number' ? row.first_content_uncertainty_ns / 1e6 : null;
    for (const w of windows) {
      if (at < w.startNs || at >= w.endNs) continue;
      const a = byWindow.get(w.name)!;
      // A failed request ranks +∞: it met no latency bound, so it counts in every percentile as the slowest.
      // TTFT is measured on the class's SLO basis: from the intended send with slo.basis intended.
      const m = Object.fromEntries(
        REQUEST_METRICS.map((k) => {
          const v = ok ? metricNs(r, k === 'ttft' ? sloTtftMetric(s?.basis) : k) : Number.POSITIVE_INFINITY;
          return [k, v === null ? null : v / 1e6];
        }),
      ) as Point['m'];
      // Goodput as run.json counts it: good, and finished inside the window.
      const good = ok && !!s && meetsSlo(r, s) && r.done_ns !== null && r.done_ns >= w.startNs && r.done_ns < w.endNs;
      if (good) a.good++;
      a.points.push({ at, m, ok, good, fromSend, uncertainty });
    }
  }
  const classes: RunSample['classes'] = {};
  const figures = run.classes;
  for (const [cls, byWindow] of acc) {
    classes[cls] = {};
    for (const [w, a] of byWindow) {
      const m = figures[cls]?.windows[w] ?? {};
      const num = (k: string): number | null => (typeof m[k] === 'number' ? (m[k] as number) : null);
      // Time order is what the block bootstrap resamples; requests.ndjson is in completion order.
      const pts = a.points.sort((x, y) => x.at - y.at);
      const seriesOf = (k: RequestMetric) => Float64Array.from(pts.map((p) => p.m[k]).filter((v): v is number => v !== null));
      const series = { ttft: seriesOf('ttft'), tpot: seriesOf('tpot'), e2e: seriesOf('e2e') };
      const successes = (x: Float64Array) => x.filter((v) => Number.isFinite(v)).sort();
      const fromSend = (k: 'content' | 'output') => Float64Array.from(pts.map((p) => p.fromSend[k]).filter((v): v is number => v !== null));
      // A success with a content token but no first-output stamp cannot be read as a first output of any kind.
      const outputKnown = pts.every((p) => p.fromSend.content === null || p.fromSend.output !== null);
      const uncertainties = Float64Array.from(pts.map((p) => p.uncertainty).filter((v): v is number => v !== null)).sort();
      // Each request's stamp may be late by its own uncertainty: how far that can move each percentile.
      const timingMarginMs: Record<string, number> = {};
      for (const k of ['ttft', 'e2e'] as const) {
        const measured = pts.filter((p) => p.m[k] !== null);
        const observed = Float64Array.from(measured, (p) => p.m[k]!).sort();
        const earliest = Float64Array.from(measured, (p) => p.m[k]! - (p.uncertainty ?? 0)).sort();
        for (const q of COMPARED_QUANTILES) {
          const shift = (nearestRank(observed, q) ?? 0) - (nearestRank(earliest, q) ?? 0);
          timingMarginMs[quantileKey(k, q)] = Number.isFinite(shift) ? shift : 0;
        }
      }
      const sample: WindowSample = {
        values: { ttft: successes(series.ttft), tpot: successes(series.tpot), e2e: successes(series.e2e) },
        series,
        ok: Float64Array.from(pts, (p) => (p.ok ? 1 : 0)),
        goodSeries: slo.get(cls) ? Float64Array.from(pts, (p) => (p.good ? 1 : 0)) : null,
        requests: pts.length,
        completed: pts.filter((p) => p.ok).length,
        good: slo.get(cls) ? a.good : null,
        goodputRps: slo.get(cls) ? num('goodput_rps') : null,
        itl: Object.fromEntries(COMPARED_QUANTILES.map((q) => [`itl_p${Math.round(q * 100)}_ms`, num(`itl_p${Math.round(q * 100)}_ms`)])),
        timingUncertaintyMs: nearestRank(uncertainties, 0.99),
        timingMarginMs,
        ttftBasis: slo.get(cls)?.basis ?? 'sent',
        ttftFromSend: { first_content: fromSend('content'), first_output: outputKnown ? fromSend('output') : null },
      };
      classes[cls]![w] = sample;
    }
  }
  const sloFigures = Object.fromEntries(plan.classes.map((c) => [c.name, Object.keys(c.slo ?? {}).flatMap((k) => sloFigure(k) ?? [])]));
  return { runId: run.run_id, planSha256: loadSha256(plan), scheduleSha256: run.schedule_sha256, sloFigures, classes };
}

/**
 * SHA-256 of the plan without where it was sent: the target (a new build at a new address is the
 * point of a comparison) and the prompt calibration against it (its note names the address) are
 * left out, as are the price and where spans are received; everything that shapes the load
 * (classes, phases, windows, seed, duration, whether spans are traced) is in.
 */
export function loadSha256(plan: Plan): string {
  // The price (cost) only prices the load; where spans are received does not shape it, whether
  // they are (a traceparent on every request, the server's tracing work) does.
  const { target: _t, prompt_calibration: _c, inputs: _i, cost: _cost, traces, ...load } = plan;
  return createHash('sha256')
    .update(canonical(traces === undefined ? load : { ...load, traces: true }))
    .digest('hex');
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return typeof v === 'bigint' ? v.toString() : JSON.stringify(v);
}

function nsToMs(v: number | null): number | null {
  return v === null ? null : v / 1e6;
}
