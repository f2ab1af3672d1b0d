// A small RFC 4180 CSV reader: quoted fields may hold commas, doubled quotes and newlines (the
// labels_json column of server-metrics.csv is JSON, so it is quoted).

/** The rows of a CSV text as records keyed by the header row's names. */
export function parseCsv(text: string): Record<string, string>[] {
  const rows = csvRows(text);
  const header = rows.shift();
  if (!header) return [];
  return rows
    .filter((r) => !(r.length === 1 && r[0] === ''))
    .map((r) => Object.fromEntries(header.map((name, i) => [name.trim(), r[i] ?? ''])));
}

/** The fields of every line of a CSV text. */
export function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** The fields of one CSV line (a trace row): one row of csvRows, [''] for an empty line. */
export function csvFields(line: string): string[] {
  return csvRows(line)[0] ?? [''];
}

/** A numeric cell, or null for an empty or non-numeric one. */
export function num(cell: string | undefined): number | null {
  if (cell === undefined || cell.trim() === '') return null;
  const v = Number(cell);
  return Number.isFinite(v) ? v : null;
}
