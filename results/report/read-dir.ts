// The report's only I/O on the way in: reads the files of one run or experiment directory and
// turns them into the pure renderers' inputs. A missing optional file becomes null (its chart says
// so); a missing or unreadable run.json / analysis.json is an error with a stable code.
import { createReadStream } from 'node:fs';
import { access, readdir, readFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { readAnalysisJson, readRunFile } from '../../shared/run-read.js';
import type { ExperimentReportInput } from './experiment-page.js';
import type { Obj } from './fields.js';
import { arr, bigOrNull, numOrNull, obj, strOrNull } from './fields.js';
import { metricIntervals } from './hlog-series.js';
import { LagAccumulator, lagFields } from './lag-series.js';
import type { RunReportInput } from './run-page.js';
import { serverSeries } from './server-series.js';
import { trafficByClass } from './traffic-series.js';
import { TtftByIntended, ttftFields } from './ttft-intended-series.js';

/** Reads a run directory's artifacts for its report. */
export async function loadRunReportInput(runDir: string): Promise<RunReportInput> {
  const run: Obj = await readRunFile(runDir);
  const [hlog, traffic, server] = await Promise.all([
    readOptional(join(runDir, 'histograms.hlog')),
    readOptional(join(runDir, 'traffic.csv')),
    readOptional(join(runDir, 'server-metrics.csv')),
  ]);
  const startNs = bigOrNull(run.started_at_unix_ns);
  return {
    run,
    ttft: hlog === null ? null : metricIntervals(hlog, 'ttft', [0.5, 0.95]),
    traffic: traffic === null ? null : trafficByClass(traffic),
    server: server === null ? null : serverSeries(server),
    ...(startNs === null ? { lag: null, ttftByIntended: null } : await readRequestSeries(join(runDir, 'requests.ndjson'), startNs)),
  };
}

/** Reads an experiment directory's analysis.json and finds each run's report. */
export async function loadExperimentReportInput(expDir: string): Promise<ExperimentReportInput> {
  const analysis: Obj = await readAnalysisJson(expDir);
  const byArmRepeat = await runDirsByArmRepeat(expDir);
  const runLinks = await Promise.all(
    arr(analysis.runs).map(async (r) => {
      const row = obj(r);
      const dir = strOrNull(row.run_dir) ?? byArmRepeat.get(`${strOrNull(row.arm)}\u0000${numOrNull(row.repeat)}`) ?? null;
      if (dir === null) return null;
      const abs = isAbsolute(dir) ? dir : resolve(expDir, dir);
      return (await exists(join(abs, 'report.html'))) ? relative(expDir, join(abs, 'report.html')).split('\\').join('/') : null;
    }),
  );
  return { analysis, runLinks };
}

/** Run directories under `<expDir>/runs/`, keyed by the arm and repeat their run.json names. */
async function runDirsByArmRepeat(expDir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let names: string[];
  try {
    names = await readdir(join(expDir, 'runs'));
  } catch {
    return out;
  }
  for (const name of names) {
    if (!(await exists(join(expDir, 'runs', name, 'run.json')))) continue;
    try {
      const run = await readRunFile(join(expDir, 'runs', name));
      if (run.status !== 'failed' && run.experiment) out.set(`${run.experiment.arm}\u0000${run.experiment.repeat}`, join('runs', name));
    } catch {
      // An unreadable run.json only costs that run its link.
    }
  }
  return out;
}

// One pass over requests.ndjson for the two series drawn from it.
async function readRequestSeries(path: string, startNs: bigint): Promise<Pick<RunReportInput, 'lag' | 'ttftByIntended'>> {
  if (!(await exists(path))) return { lag: null, ttftByIntended: null };
  const acc = new LagAccumulator(startNs);
  const ttft = new TtftByIntended(startNs);
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const f = lagFields(line);
    acc.add(f.agentId, f.intendedNs, f.sentNs);
    const t = ttftFields(line);
    ttft.add(t.cls, t.ok, f.intendedNs, f.sentNs, t.firstContentNs);
  }
  return { lag: acc.p99PerSecond(), ttftByIntended: ttft.percentiles() };
}

async function readOptional(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Whether a path exists. */
export async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
