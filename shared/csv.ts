// CSV read with csv-parse (RFC 4180: quoted fields may hold commas, doubled quotes and newlines; a
// trace's quoted prompt or the labels_json column of server-metrics.csv are quoted so). Each record
// keeps the line it starts on, so a problem can name it.
import { parse } from 'csv-parse/sync';

/** One CSV record: its fields and the 1-based line it starts on. */
export interface CsvRecord {
  fields: string[];
  line: number;
}

/** Every record of a CSV text (the header too), blank lines skipped; a malformed file throws with its line. */
export function csvRecords(text: string): CsvRecord[] {
  // Line ends made one kind first (files mix them), so every line counts once; a quoted field's
  // CRLF reads as LF.
  const lf = text.replace(/\r\n?/g, '\n');
  const out = parse(lf, {
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    info: true,
    raw: true,
    record_delimiter: '\n',
  }) as unknown as {
    record: string[];
    info: { lines: number; raw?: string };
  }[];
  // info.lines is the line a record ends on; a record with quoted newlines started that many lines earlier.
  return out.map(({ record, info }) => ({ fields: record, line: info.lines - newlines(info.raw ?? '') }));
}

// Newlines inside a record's raw text (blank lines skipped before it and its own line end excluded).
function newlines(rawText: string): number {
  const raw = rawText.replace(/^\n+/, '');
  let n = 0;
  for (let i = raw.indexOf('\n'); i !== -1 && i < raw.length - 1; i = raw.indexOf('\n', i + 1)) n++;
  return n;
}

/** The fields of every record of a CSV text. */
export function csvRows(text: string): string[][] {
  return csvRecords(text).map((r) => r.fields);
}

/** The rows of a CSV text as records keyed by the header row's names. */
export function parseCsv(text: string): Record<string, string>[] {
  const rows = csvRows(text);
  const header = rows.shift();
  if (!header) return [];
  return rows.map((r) => Object.fromEntries(header.map((name, i) => [name.trim(), r[i] ?? ''])));
}

/** A numeric cell, or null for an empty or non-numeric one. */
export function num(cell: string | undefined): number | null {
  if (cell === undefined || cell.trim() === '') return null;
  const v = Number(cell);
  return Number.isFinite(v) ? v : null;
}
