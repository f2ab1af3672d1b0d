// Production traces (domain.md §10) read into rows: Mooncake JSONL, Azure LLM inference CSV and
// BurstGPT CSV. Every problem names the file's line, so a bad row can be found and fixed; nothing
// is guessed (an unsorted or negative timestamp is an error, not something we reorder).

import { csvRecords } from './csv.js';
import type { TraceFormat, TraceSpec } from './plan.js';

/** Row filters a plan can set on a CSV trace's columns (load.trace.models, log_types). */
export type TraceFilters = Pick<TraceSpec, 'models' | 'log_types'>;

/** The column each filter reads. */
const FILTER_COLUMNS = { models: 'Model', log_types: 'Log Type' } as const;

/** A row as the file says it, before slicing and scaling: trace time in ms from the trace's origin. */
export interface RawTraceRow {
  t_ms: number;
  input_tokens: number;
  output_tokens: number;
  hash_ids: number[];
  /** 1-based line in the file. */
  line: number;
}

/** Rows read from a trace file, rows deliberately skipped (with why), or the problems found. */
export interface ParsedTrace {
  rows: RawTraceRow[];
  /** Data rows in the file (header and blank lines excluded). */
  rowsInFile: number;
  /** Rows the format says were not served (BurstGPT failures: 0 response tokens); never replayed. */
  skipped: number;
  /** Rows the plan's filters (models, log_types) left out. */
  filtered: number;
  problems: string[];
}

/** Parses `text` of `format`; problems read "line N: …". */
export function parseTrace(text: string, format: TraceFormat, filters: TraceFilters = {}): ParsedTrace {
  const out: ParsedTrace = { rows: [], rowsInFile: 0, skipped: 0, filtered: 0, problems: [] };
  if (format !== 'mooncake') parseCsvTrace(text, format, filters, out);
  else if (filters.models || filters.log_types) problem(out, 1, 'a Mooncake trace has no Model or Log Type column to filter on');
  else parseMooncake(text, out);
  checkOrder(out);
  return out;
}

const MAX_PROBLEMS = 20;

function problem(out: ParsedTrace, line: number, message: string): void {
  if (out.problems.length < MAX_PROBLEMS) out.problems.push(`line ${line}: ${message}`);
}

function lines(text: string): string[] {
  return text.replace(/^\uFEFF/, '').split(/\r?\n/);
}

function isCount(v: unknown, min: number): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
}

// {"timestamp": ms since the first request, "input_length", "output_length", "hash_ids": [ints]}
function parseMooncake(text: string, out: ParsedTrace): void {
  const all = lines(text);
  for (let i = 0; i < all.length; i++) {
    const line = i + 1;
    if (all[i]!.trim() === '') continue;
    out.rowsInFile++;
    const row = mooncakeRow(all[i]!);
    if (typeof row === 'string') problem(out, line, row);
    else out.rows.push({ ...row, line });
  }
}

/** One JSONL line as an object, or what is wrong with it (trace rows and dataset records alike). */
export function jsonObjectLine(raw: string): Record<string, unknown> | string {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (err) {
    return `invalid JSON (${(err as Error).message})`;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'must be a JSON object';
  return v as Record<string, unknown>;
}

// One row, or what is wrong with it.
function mooncakeRow(raw: string): Omit<RawTraceRow, 'line'> | string {
  const o = jsonObjectLine(raw);
  if (typeof o === 'string') return o;
  const bad: string[] = [];
  if (typeof o.timestamp !== 'number' || !Number.isFinite(o.timestamp)) bad.push('"timestamp" must be a number (ms)');
  else if (o.timestamp < 0) bad.push(`"timestamp" must be >= 0 (is ${o.timestamp})`);
  if (!isCount(o.input_length, 1)) bad.push('"input_length" must be an integer >= 1');
  if (!isCount(o.output_length, 1)) bad.push('"output_length" must be an integer >= 1');
  const ids = o.hash_ids ?? [];
  if (!Array.isArray(ids) || !ids.every((h) => isCount(h, 0))) bad.push('"hash_ids" must be an array of integers >= 0');
  if (bad.length > 0) return bad.join('; ');
  return {
    t_ms: o.timestamp as number,
    input_tokens: o.input_length as number,
    output_tokens: o.output_length as number,
    hash_ids: ids as number[],
  };
}

/** Column names per CSV format: time, prompt tokens, completion tokens. */
const CSV_COLUMNS: Record<Exclude<TraceFormat, 'mooncake'>, { time: string; input: string; output: string }> = {
  azure: { time: 'TIMESTAMP', input: 'ContextTokens', output: 'GeneratedTokens' },
  burstgpt: { time: 'Timestamp', input: 'Request tokens', output: 'Response tokens' },
};

function parseCsvTrace(text: string, format: Exclude<TraceFormat, 'mooncake'>, filters: TraceFilters, out: ParsedTrace): void {
  let records: ReturnType<typeof csvRecords>;
  try {
    records = csvRecords(text);
  } catch (err) {
    // csv-parse names the line of a malformed record (an unclosed quote, say).
    problem(out, (err as { lines?: number }).lines ?? 1, `not CSV: ${(err as Error).message}`);
    return;
  }
  const header = (records.shift()?.fields ?? []).map((h) => h.trim());
  const cols = CSV_COLUMNS[format];
  const at = (name: string): number => header.indexOf(name);
  const [ti, ii, oi] = [at(cols.time), at(cols.input), at(cols.output)];
  const keep = (Object.keys(FILTER_COLUMNS) as (keyof typeof FILTER_COLUMNS)[]).flatMap((key) =>
    filters[key] ? [{ column: FILTER_COLUMNS[key], index: at(FILTER_COLUMNS[key]), values: new Set(filters[key]) }] : [],
  );
  const missing = [cols.time, cols.input, cols.output, ...keep.map((k) => k.column)].filter((name) => at(name) < 0);
  if (missing.length > 0) {
    problem(out, 1, `header lacks column${missing.length > 1 ? 's' : ''} ${missing.map((m) => JSON.stringify(m)).join(', ')}`);
    return;
  }
  let originMs: number | undefined;
  for (const { fields: f, line } of records) {
    if (f.length === 1 && f[0]!.trim() === '') continue;
    out.rowsInFile++;
    if (f.length < header.length) {
      problem(out, line, `has ${f.length} fields, the header ${header.length}`);
      continue;
    }
    const input = cellNumber(f[ii]!);
    const output = cellNumber(f[oi]!);
    const t = format === 'azure' ? dateTimeMs(f[ti]!.trim()) : cellNumber(f[ti]!) * 1000;
    const bad: string[] = [];
    if (t === undefined || !Number.isFinite(t))
      bad.push(`${JSON.stringify(cols.time)} is not a ${format === 'azure' ? 'date-time' : 'number of seconds'}`);
    else if (t < 0) bad.push(`${JSON.stringify(cols.time)} must be >= 0`);
    if (!isCount(input, 1)) bad.push(`${JSON.stringify(cols.input)} must be an integer >= 1`);
    if (!isCount(output, 0)) bad.push(`${JSON.stringify(cols.output)} must be an integer >= 0`);
    if (bad.length > 0) {
      problem(out, line, bad.join('; '));
      continue;
    }
    // Azure times are wall-clock dates: the trace's origin is its first row (before any filter).
    if (format === 'azure') originMs ??= t!;
    if (!keep.every((k) => k.values.has(f[k.index]!.trim()))) {
      out.filtered++;
      continue;
    }
    // A request that produced nothing was not served (BurstGPT logs failures so); it cannot be asked for.
    if (output === 0) {
      out.skipped++;
      continue;
    }
    out.rows.push({ t_ms: t! - (originMs ?? 0), input_tokens: input, output_tokens: output, hash_ids: [], line });
  }
}

const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;

// A cell as a decimal number, NaN otherwise: Number() reads a blank cell as 0 (an empty response
// count became a failed request, an empty time the trace's start) and "0x10" as 16.
function cellNumber(cell: string): number {
  return DECIMAL.test(cell) ? Number(cell) : Number.NaN;
}

function checkOrder(out: ParsedTrace): void {
  for (let i = 1; i < out.rows.length; i++) {
    const [prev, row] = [out.rows[i - 1]!, out.rows[i]!];
    if (row.t_ms < prev.t_ms)
      problem(out, row.line, `timestamp goes back in time (before line ${prev.line}'s); the rows must be sorted by time`);
  }
}

/** "2023-11-16 18:15:46.6805900" (or with a T, optionally a Z) as ms since the epoch, read as UTC. */
function dateTimeMs(s: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?Z?$/.exec(s);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, sec, frac = ''] = m;
  const whole = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec));
  return whole + Number(`0.${frac || '0'}`) * 1000;
}
