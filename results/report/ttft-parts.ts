// Where the time to first token went, from run.json's server_spans: per class and window, one
// stacked bar for the typical requests (TTFT near the p50) and one for the slow ones (near the
// p95), each part its own colour, then each server clock's offset and how sure it is. Pure:
// run.json in, HTML out.
import type { Obj } from './fields.js';
import { numOrNull, obj, strOrNull } from './fields.js';
import { colour, emptyNote, esc, figure, legend, px, svgOpen } from './svg.js';

const PARTS: { key: string; label: string }[] = [
  { key: 'to_server_ms', label: 'to the server (network, gateway)' },
  { key: 'queue_ms', label: 'queue' },
  { key: 'prefill_ms', label: 'prefill' },
  { key: 'unaccounted_ms', label: 'unaccounted in the server' },
  { key: 'handoff_ms', label: 'prefill → decode handoff' },
  { key: 'from_server_ms', label: 'back from the server' },
];

const fmt = (ms: number): string => (Math.abs(ms) >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);

/** The p95 band's one sentence for a class ("p95 TTFT 10.4 s: 9.6 s of it queued"), or null. */
export function whereTtftWent(run: Obj, cls: string): string | null {
  return strOrNull(obj(obj(obj(obj(obj(run.server_spans).classes)[cls]).windows).all).where_ttft_went);
}

/** The section, or '' when the run received no server spans. */
export function ttftPartsSection(run: Obj): string {
  const spans = obj(run.server_spans);
  if (Object.keys(spans).length === 0) return '';
  const classes = obj(spans.classes);
  const rows: { label: string; ttft: number; parts: Obj }[] = [];
  // Per class, the whole run first, then each of the plan's windows (a surge beside its baseline).
  for (const [cls, c] of Object.entries(classes))
    for (const [w, stats] of Object.entries(obj(obj(c).windows)))
      for (const band of ['ttft_p50', 'ttft_p95'] as const) {
        const b = obj(obj(stats)[band]);
        const ttft = numOrNull(b.ttft_ms);
        const label = w === 'all' ? `${cls} ${band.slice(5)}` : `${cls} ${w} ${band.slice(5)}`;
        if (ttft !== null) rows.push({ label, ttft, parts: obj(b.parts) });
      }
  const defs = obj(run.field_definitions);
  const text = {
    id: 'ttft-parts',
    title: 'Where the time to first token went',
    definition: `${strOrNull(defs['server_spans.classes.<class>.windows.<window>.ttft_p95']) ?? ''}. Parts: ${strOrNull(defs['requests.ndjson TTFT parts']) ?? ''}.`,
  };
  const body = rows.length === 0 ? emptyNote('No request joined a server span.') : bars(rows);
  return `<h2 id="server-spans">Server spans</h2>${figure(text, body)}${clockLines(obj(spans.clocks), obj(spans.receiver))}`;
}

function bars(rows: { label: string; ttft: number; parts: Obj }[]): string {
  const [width, left, right, rowH] = [860, 170, 90, 26];
  const max = Math.max(...rows.map((r) => r.ttft), 1e-9);
  const scale = (width - left - right) / max;
  const key = legend(
    PARTS.map((p, i) => ({ label: p.label, colour: colour(i), mark: 'box' as const })),
    left,
    12,
    width - left,
  );
  const top = 12 + key.height + 6;
  const svg: string[] = [svgOpen(width, top + rows.length * rowH + 8, 'Where the time to first token went, per class'), key.svg];
  rows.forEach((r, i) => {
    const y = top + i * rowH;
    svg.push(`<text x="${left - 8}" y="${y + 15}" text-anchor="end">${esc(r.label)}</text>`);
    let x = left;
    PARTS.forEach((p, k) => {
      // A part within the offset's uncertainty of zero can come out slightly negative: drawn as nothing.
      const v = Math.max(0, numOrNull(r.parts[p.key]) ?? 0);
      if (v <= 0) return;
      svg.push(
        `<rect x="${px(x)}" y="${y + 3}" width="${px(v * scale)}" height="${rowH - 8}" fill="${colour(k)}"><title>${esc(`${p.label}: ${fmt(v)}`)}</title></rect>`,
      );
      x += v * scale;
    });
    svg.push(`<text x="${px(left + r.ttft * scale + 6)}" y="${y + 15}">${esc(fmt(r.ttft))}</text>`);
  });
  svg.push('</svg>');
  return svg.join('');
}

function clockLines(clocks: Obj, receiver: Obj): string {
  const lines = Object.entries(clocks).map(([key, c]) => {
    const o = obj(c);
    const caveat = strOrNull(o.caveat) === null ? '' : ' (one clock per service.name: its spans name no instance)';
    if (o.kind !== 'fitted') return `${key}: ${strOrNull(o.reason) ?? 'no joined request bounds its clock'}${caveat}`;
    const off = (numOrNull(o.offset_ns) ?? 0) / 1e6;
    const unc = (numOrNull(o.offset_uncertainty_ns) ?? 0) / 1e6;
    // A drift known only to within a tenth of a percent says nothing a reader can use beyond that.
    const driftUnc = numOrNull(o.drift_uncertainty_ppm);
    const limit = numOrNull(o.drift_limit_ppm);
    const drift =
      o.model !== 'line' || driftUnc === null
        ? `drift not bounded by this run${limit === null ? '' : `: the offset holds for any within ±${limit} ppm`}`
        : driftUnc < 1000
          ? `drift ${numOrNull(o.drift_ppm)} ± ${driftUnc} ppm`
          : `drift known only to ± ${driftUnc} ppm`;
    const notes: string[] = [];
    const slack = numOrNull(o.slack_ns) ?? 0;
    if (slack > 0)
      notes.push(
        `${numOrNull(o.bounds_crossing) ?? 0} bounds crossed by up to ${fmt((numOrNull(o.bounds_crossing_max_ns) ?? 2 * slack) / 1e6)}: each widened by ${fmt(slack / 1e6)}, and the uncertainty with them`,
      );
    const ends = numOrNull(o.end_bounds_crossing) ?? 0;
    if (ends > 0)
      notes.push(
        `${ends} spans end after the client read their last byte (by up to ${fmt((numOrNull(o.end_bounds_crossing_max_ns) ?? 0) / 1e6)}): their ends are not used`,
      );
    return `${key}: its clock reads ${fmt(off)} ± ${fmt(unc)} from the run's (${drift}, ${numOrNull(o.requests)} requests)${notes.map((n) => `; ${n}`).join('')}${caveat}`;
  });
  const refused = Object.values(obj(receiver.refused)).reduce<number>((n, v) => n + (numOrNull(v) ?? 0), 0);
  lines.push(
    `${numOrNull(receiver.spans) ?? 0} spans received, ${refused} export requests refused, ${numOrNull(receiver.foreign) ?? 0} spans of no request of this run`,
  );
  return `<p class="definition">${lines.map(esc).join('<br>')}</p>`;
}
