// Property: a production trace (Mooncake JSONL, Azure or BurstGPT CSV) written with any mix of line
// ends, blank lines, a byte-order mark and quoted fields holding commas, quotes and newlines reads
// back as exactly its rows, each with the line it starts on; a row with any one cell blank,
// non-numeric or out of range is a problem naming that line, never a row with another value.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvRecords } from './csv.js';
import type { TraceFormat } from './plan.js';
import { parseTrace } from './trace-parse.js';

const SOAK = process.env.LOADFLEET_SOAK === '1' ? 10 : 1;
/** The soak round's runs take ten times as long. */
const TIMEOUT_MS = SOAK > 1 ? 600_000 : undefined;

interface Row {
  tMs: number;
  input: number;
  output: number;
  note: string;
}

/** Rows in time order: integer ms steps (a trace's times), counts ≥ 1, a free-text note. */
const rows = fc
  .array(
    fc.record({
      stepMs: fc.integer({ min: 0, max: 5000 }),
      input: fc.integer({ min: 1, max: 100_000 }),
      output: fc.integer({ min: 1, max: 5000 }),
      note: fc.string({ unit: fc.constantFrom('a', ',', '"', '\n', '\r\n', ' ', 'é'), maxLength: 6 }),
    }),
    { minLength: 1, maxLength: 12 },
  )
  .map((rs) => {
    let t = 0;
    return rs.map((r): Row => {
      t += r.stepMs;
      return { tMs: t, input: r.input, output: r.output, note: r.note };
    });
  });

const quoted = (s: string): string => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
const AZURE_ORIGIN_MS = Date.UTC(2023, 10, 16, 18, 15, 46);

/** The trace's cells of one row, in its format's columns. */
function cells(format: TraceFormat, r: Row): { time: string; input: string; output: string; rest: string[] } {
  if (format === 'azure')
    return { time: new Date(AZURE_ORIGIN_MS + r.tMs).toISOString(), input: `${r.input}`, output: `${r.output}`, rest: [] };
  return { time: `${r.tMs / 1000}`, input: `${r.input}`, output: `${r.output}`, rest: ['ChatGPT', 'Conversation log'] };
}

/** One row's line(s) of the file, with cell `broken` (if any) replaced. */
function rowText(format: TraceFormat, r: Row, broken?: { cell: 'time' | 'input' | 'output'; value: string }): string {
  const c = cells(format, r);
  if (broken) c[broken.cell] = broken.value;
  if (format === 'mooncake') {
    const v = (cell: 'time' | 'input' | 'output', n: number): string => (broken?.cell === cell ? broken.value : `${n}`);
    return `{"timestamp": ${v('time', r.tMs)}, "input_length": ${v('input', r.input)}, "output_length": ${v('output', r.output)}, "hash_ids": [1, 2], "note": ${JSON.stringify(r.note)}}`;
  }
  if (format === 'azure') return [c.time, quoted(c.input), quoted(c.output), quoted(r.note)].join(',');
  return [quoted(c.time), c.rest[0], quoted(c.input), quoted(c.output), `${r.input + r.output}`, c.rest[1], quoted(r.note)].join(',');
}

const HEADER: Record<TraceFormat, string | null> = {
  mooncake: null,
  azure: 'TIMESTAMP,ContextTokens,GeneratedTokens,Note',
  burstgpt: 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type,Note',
};

/** A whole file: header, rows, blank lines between, each line end LF, CRLF or (CSV only) CR; the line each row starts on. */
function file(
  format: TraceFormat,
  rs: readonly Row[],
  ends: readonly string[],
  blanks: readonly number[],
  bom: boolean,
  broken?: { row: number; cell: 'time' | 'input' | 'output'; value: string },
): { text: string; lines: number[] } {
  const lineEnd = (i: number): string => {
    const e = ends[i % ends.length]!;
    return format === 'mooncake' && e === '\r' ? '\n' : e; // JSONL lines end in LF or CRLF
  };
  let text = bom ? '\uFEFF' : '';
  let line = 1;
  const lines: number[] = [];
  const header = HEADER[format];
  if (header) {
    text += header + lineEnd(0);
    line++;
  }
  rs.forEach((r, i) => {
    for (let b = 0; b < blanks[i % blanks.length]!; b++) {
      text += lineEnd(i + b + 1);
      line++;
    }
    lines.push(line);
    const t = rowText(format, r, broken?.row === i ? broken : undefined);
    text += t + lineEnd(i);
    line += (t.match(/\r\n|\r|\n/g) ?? []).length + 1;
  });
  return { text, lines };
}

const format = fc.constantFrom<TraceFormat>('mooncake', 'azure', 'burstgpt');
// LF and CRLF mixed, or CR alone (a CR followed by an LF would be one CRLF, not two line ends).
const ends = fc.oneof(fc.array(fc.constantFrom('\n', '\r\n'), { minLength: 1, maxLength: 4 }), fc.constant(['\r']));
const blanks = fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 4 });

describe('trace files (property)', () => {
  it(
    'read back exactly, each row with the line it starts on',
    () => {
      fc.assert(
        fc.property(format, rows, ends, blanks, fc.boolean(), (f, rs, e, b, bom) => {
          const { text, lines } = file(f, rs, e, b, bom);
          const t = parseTrace(text, f);
          expect(t.problems).toEqual([]);
          expect(t.rowsInFile).toBe(rs.length);
          expect(t.rows.map((r) => r.line)).toEqual(lines);
          // Azure times are dates: the trace's origin is its first row.
          const origin = f === 'azure' ? rs[0]!.tMs : 0;
          t.rows.forEach((r, i) => {
            expect(r.t_ms).toBeCloseTo(rs[i]!.tMs - origin, 6);
            expect([r.input_tokens, r.output_tokens]).toEqual([rs[i]!.input, rs[i]!.output]);
          });
          if (f !== 'mooncake') {
            // The notes (quoted commas, quotes and newlines) come back as written.
            const records = csvRecords(text).slice(1);
            expect(records.map((r) => r.fields.at(-1))).toEqual(rs.map((r) => r.note.replace(/\r\n/g, '\n')));
          }
        }),
        { numRuns: 400 * SOAK },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'a row with a blank, non-numeric or out-of-range cell is a problem at its line, never a row',
    () => {
      const badCell = fc.constantFrom('', ' ', 'x', '-1', '1.5', 'NaN', 'Infinity', '1e400', 'null', '[]');
      fc.assert(
        fc.property(
          format,
          rows,
          ends,
          blanks,
          fc.nat(),
          fc.constantFrom('time' as const, 'input' as const, 'output' as const),
          badCell,
          (f, rs, e, b, at, cell, value) => {
            const row = at % rs.length;
            // A fractional time is a time; so is 1.5 s in a CSV: only the counts must be whole.
            fc.pre(!(cell === 'time' && value === '1.5'));
            // Mooncake cells are JSON: a blank or a word is no JSON at all, still a problem at the line.
            const { text, lines } = file(f, rs, e, b, false, { row, cell, value });
            const t = parseTrace(text, f);
            expect(t.rows.map((r) => r.line)).not.toContain(lines[row]);
            expect(
              t.problems.some((p) => p.startsWith(`line ${lines[row]}: `)),
              `${JSON.stringify(t.problems)}\n${JSON.stringify(text)}`,
            ).toBe(true);
          },
        ),
        { numRuns: 600 * SOAK },
      );
    },
    TIMEOUT_MS,
  );
});
