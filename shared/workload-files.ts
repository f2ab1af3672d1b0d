// The files a plan names (trace and dataset): paths made absolute against the plan's directory,
// then read, checked and hashed by the coordinator. The agents get the parsed rows with the plan
// (plan.inputs), so a client host never needs the file and every agent replays the same bytes.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { parseDataset, recordWords } from './dataset-parse.js';
import { PlanInvalidError } from './errors.js';
import { secondsToNs } from './load/model.js';
import type { DatasetRecord, Plan, TraceRow, TraceSpec, WorkloadFile, WorkloadInputs } from './plan.js';
import { TRACE_DEFAULTS } from './plan.js';
import { parseTrace } from './trace-parse.js';

/** The plan with every trace and dataset path absolute (relative ones are relative to `baseDir`). */
export function resolveWorkloadPaths(plan: Plan, baseDir: string): Plan {
  const abs = (p: string): string => (isAbsolute(p) ? p : resolve(baseDir, p));
  return {
    ...plan,
    classes: plan.classes.map((cls) => ({
      ...cls,
      load: cls.load.trace ? { ...cls.load, trace: { ...cls.load.trace, file: abs(cls.load.trace.file) } } : cls.load,
      prompt: cls.prompt.dataset ? { ...cls.prompt, dataset: { ...cls.prompt.dataset, file: abs(cls.prompt.dataset.file) } } : cls.prompt,
    })),
  };
}

/** Whether any class of the plan reads a file. */
export function hasWorkloadFiles(plan: Plan): boolean {
  return plan.classes.some((c) => c.load.trace !== undefined || c.prompt.dataset !== undefined);
}

/** The plan with `inputs` read from its files (unchanged when it names none); bad files are LF_PLAN_INVALID (exit 2). */
export async function attachWorkloadInputs(plan: Plan): Promise<Plan> {
  if (!hasWorkloadFiles(plan)) return plan;
  const { inputs, problems } = await readWorkloadInputs(plan);
  if (problems.length > 0) throw new PlanInvalidError(problems, `plan ${plan.name}`);
  return { ...plan, inputs };
}

/** Reads every file the plan names; problems are `<json path>: <file> line N: …` lines. */
export async function readWorkloadInputs(plan: Plan): Promise<{ inputs: WorkloadInputs; problems: string[] }> {
  const inputs: WorkloadInputs = { files: [], traces: {}, datasets: {} };
  const problems: string[] = [];
  for (const [i, cls] of plan.classes.entries()) {
    const trace = cls.load.trace;
    if (trace) {
      const at = `classes[${i}].load.trace.file`;
      const bytes = await readBytes(trace.file, at, problems);
      if (bytes) {
        const parsed = parseTrace(bytes.toString('utf8'), trace.format, trace);
        problems.push(...parsed.problems.map((p) => `${at}: ${trace.file} ${p}`));
        const rows = sliceTrace(parsed.rows, trace, plan.duration_s);
        if (parsed.problems.length === 0 && rows.length === 0)
          problems.push(
            `${at}: ${trace.file}: no row falls inside the run (start_s, limit and duration_s leave none${parsed.filtered > 0 ? `; the models/log_types filters left out ${parsed.filtered}` : ''})`,
          );
        inputs.traces[cls.name] = rows;
        inputs.files.push(fileEntry(cls.name, 'trace', trace.file, bytes, parsed.rowsInFile, rows.length));
      }
    }
    const dataset = cls.prompt.dataset;
    if (dataset) {
      const at = `classes[${i}].prompt.dataset.file`;
      const bytes = await readBytes(dataset.file, at, problems);
      if (bytes) {
        const parsed = parseDataset(bytes.toString('utf8'), dataset.format);
        problems.push(...parsed.problems.map((p) => `${at}: ${dataset.file} ${p}`));
        const records = parsed.records.filter((r) => keepRecord(r, dataset.min_input_tokens, dataset.max_input_tokens));
        if (parsed.problems.length === 0 && records.length === 0)
          problems.push(`${at}: ${dataset.file}: no record passes the length filters`);
        inputs.datasets[cls.name] = records;
        // The filters count words here; where the target can count, calibration filters on its tokens.
        if (dataset.min_input_tokens !== undefined || dataset.max_input_tokens !== undefined)
          inputs.unfiltered_datasets = { ...inputs.unfiltered_datasets, [cls.name]: parsed.records };
        inputs.files.push(fileEntry(cls.name, 'dataset', dataset.file, bytes, parsed.inFile, records.length));
      }
    }
  }
  return { inputs, problems };
}

async function readBytes(path: string, at: string, problems: string[]): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (err) {
    problems.push(`${at}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    return undefined;
  }
}

function fileEntry(cls: string, kind: WorkloadFile['kind'], path: string, bytes: Buffer, inFile: number, used: number): WorkloadFile {
  return { class: cls, kind, path, sha256: createHash('sha256').update(bytes).digest('hex'), rows_in_file: inFile, rows_used: used };
}

function keepRecord(r: DatasetRecord, min: number | undefined, max: number | undefined): boolean {
  const n = recordWords(r);
  return n >= (min ?? 1) && n <= (max ?? Number.MAX_SAFE_INTEGER);
}

/**
 * The rows replayed: from trace second `start_s` on (that instant is the run's t = 0), at most
 * `limit`, and only those intended before the run's end. A row at trace time t ms is intended at
 * (t − start_s·1000) × time_scale ms.
 */
export function sliceTrace(
  rows: readonly { t_ms: number; input_tokens: number; output_tokens: number; hash_ids: number[]; line: number }[],
  spec: TraceSpec,
  durationS: number,
): TraceRow[] {
  const scale = spec.time_scale ?? TRACE_DEFAULTS.time_scale;
  const fromMs = (spec.start_s ?? TRACE_DEFAULTS.start_s) * 1000;
  const endNs = secondsToNs(durationS);
  const out: TraceRow[] = [];
  for (const r of rows) {
    if (r.t_ms < fromMs) continue;
    if (spec.limit !== undefined && out.length >= spec.limit) break;
    const atNs = Math.round((r.t_ms - fromMs) * scale * 1e6);
    if (atNs >= endNs) break;
    out.push({ at_ns: atNs, input_tokens: r.input_tokens, output_tokens: r.output_tokens, hash_ids: r.hash_ids, line: r.line });
  }
  return out;
}
