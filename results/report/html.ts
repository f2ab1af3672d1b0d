// The page around the charts: one self-contained HTML document (inline CSS, no script, no font
// or image fetched), plus the table, badge and check-list pieces both reports use.
import { formatExact } from './scale.js';
import { esc } from './svg.js';

const CSS = `
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: #1f2328; background: #f6f7f9;
  max-width: 940px; margin: 20px auto 48px; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #d8dce2; padding-bottom: 4px; }
h3 { font-size: 14.5px; margin: 0 0 2px; }
.meta { color: #57606a; margin: 0 0 10px; } .meta span + span::before { content: " · "; }
.answer { font-size: 16px; background: #fff; border-left: 4px solid #0072B2; padding: 10px 14px; margin: 12px 0; }
.boundary { color: #57606a; font-style: italic; }
.reason { margin: 6px 0 0; }
figure.chart { background: #fff; border: 1px solid #d8dce2; border-radius: 6px; padding: 12px 14px 6px; margin: 14px 0; }
figure.chart svg { width: 100%; height: auto; display: block; }
.definition { color: #57606a; font-size: 12.5px; margin: 0 0 4px; }
.no-data { color: #8a5300; background: #fff8e6; border: 1px dashed #e0b050; padding: 14px; text-align: center; margin: 8px 0; }
svg text { font-size: 11px; fill: #333; } svg .axis-title { font-size: 12px; fill: #1f2328; }
svg .grid { stroke: #eceef1; } svg .axis, svg .tick-mark { stroke: #8c959f; }
svg .band-label { font-size: 10.5px; fill: #44546a; } svg .arm-label { font-size: 12px; } svg .arm-name { font-weight: 600; }
.grid2 { display: grid; grid-template-columns: 1fr 1fr; gap: 0 14px; }
.grid2 figure.chart { margin: 7px 0; }
table { border-collapse: collapse; background: #fff; font-variant-numeric: tabular-nums; width: 100%; font-size: 13px; }
th, td { padding: 4px 8px; border-bottom: 1px solid #e4e7eb; text-align: right; vertical-align: top; }
th { background: #eef1f4; font-weight: 600; }
th:first-child, td:first-child, td.text, th.text { text-align: left; }
.badge { display: inline-block; white-space: nowrap; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; color: #fff; }
.badge.good { background: #1a7f37; } .badge.warn { background: #9a6700; } .badge.bad { background: #cf222e; } .badge.none { background: #6e7781; }
code, pre { font: 11.5px/1.4 "DejaVu Sans Mono", "Liberation Mono", monospace; white-space: pre-wrap; word-break: break-word; }
details summary { cursor: pointer; color: #0969da; }
td small { white-space: nowrap; }
a { color: #0969da; }
footer { color: #6e7781; font-size: 12px; margin-top: 32px; }
`;

/** A whole HTML document. */
export function page(title: string, body: string): string {
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    // No network at all: nothing may be fetched, not even a favicon.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    '<link rel="icon" href="data:,">',
    `<title>${esc(title)}</title><style>${CSS}</style></head>`,
    `<body>${body}<footer>Written by loadfleet from the files in this directory; no network access needed.</footer></body></html>`,
    '',
  ].join('\n');
}

/** A table: header cells and rows of already-escaped cell HTML (first column left-aligned). */
export function table(headers: readonly string[], rows: readonly (readonly string[])[], cls = ''): string {
  const head = `<tr>${headers.map((h) => `<th>${h}</th>`).join('')}</tr>`;
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('');
  return `<table${cls ? ` class="${cls}"` : ''}><thead>${head}</thead><tbody>${body}</tbody></table>`;
}

/** A coloured label: good (green), warn (amber), bad (red) or none (grey). */
export function badge(text: string, tone: 'good' | 'warn' | 'bad' | 'none'): string {
  return `<span class="badge ${tone}">${esc(text)}</span>`;
}

/** A badge for a boolean verdict (null: not present). */
export function verdict(v: boolean | null, yes = 'valid', no = 'invalid'): string {
  return v === null ? badge('not recorded', 'none') : v ? badge(yes, 'good') : badge(no, 'bad');
}

/** A number for a table cell as recorded (up to 3 decimals), escaped ('–' when absent). */
export function cellNum(v: number | null | undefined): string {
  return esc(formatExact(v));
}

/** Evidence or other small JSON shown compactly; long values fold into a <details>. */
export function compactJson(v: unknown): string {
  if (v === undefined || v === null) return '';
  const text = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
  if (text.length <= 160) return `<code>${esc(text)}</code>`;
  const pretty = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x), 2);
  return `<details><summary>${esc(text.slice(0, 70))}…</summary><pre>${esc(pretty)}</pre></details>`;
}
