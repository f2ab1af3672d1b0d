// Pure: report.html for a sweep — latency vs offered load and throughput vs offered load with the
// capacity marked, as inline SVG (no scripts, no dependencies), then the stage table and the answer.
// Reads only the sweep.json document.

interface Stage {
  value: number;
  verdict: string;
  reason: string;
  achieved_rps: number | null;
  /** Absent in a sweep.json written before goodput existed. */
  goodput_rps?: number | null;
  scheduled_rps: number | null;
  offered_rps: number | null;
  ttft_p50_ms: number | null;
  ttft_p95_ms: number | null;
  ttft_p99_ms: number | null;
  tpot_p95_ms: number | null;
  success_rate: number | null;
  run_dir: string | null;
}

/** The fields of sweep.json the report reads. */
export interface SweepDoc {
  name: string;
  class: string;
  unit: string;
  scale: string;
  stages: Stage[];
  capacity: number | null;
  bracket: [number | null, number | null];
  knee: { value: number | null };
  slo: { ttft_p95_ms?: number; tpot_p95_ms?: number };
  answer: string;
  stop_reason: string | null;
}

const W = 540;
const H = 300;
const M = { l: 60, r: 20, t: 20, b: 44 };
const COLORS = { pass: '#1a7f37', fail: '#cf222e', client_limited: '#9a6700', error: '#6e7781' } as Record<string, string>;

interface Series {
  name: string;
  color: string;
  dash?: string;
  points: { x: number; y: number }[];
}

/** The whole report page. */
export function sweepReportHtml(doc: SweepDoc): string {
  const stages = [...doc.stages].sort((a, b) => a.value - b.value);
  const pts = (f: (s: Stage) => number | null) =>
    stages.flatMap((s) => {
      const y = f(s);
      return y === null ? [] : [{ x: s.value, y }];
    });
  const latency = chart(
    `TTFT vs offered load (${doc.unit})`,
    'ms',
    [
      { name: 'p50 TTFT', color: '#0969da', points: pts((s) => s.ttft_p50_ms) },
      { name: 'p95 TTFT', color: '#8250df', points: pts((s) => s.ttft_p95_ms) },
      { name: 'p99 TTFT', color: '#bf8700', dash: '4 3', points: pts((s) => s.ttft_p99_ms) },
    ],
    stages,
    doc,
    doc.slo.ttft_p95_ms,
  );
  const throughput = chart(
    `Achieved throughput vs offered load (${doc.unit})`,
    'req/s',
    [
      { name: 'achieved req/s', color: '#0969da', points: pts((s) => s.achieved_rps) },
      { name: 'goodput req/s (met every per-request SLO bound)', color: '#1a7f37', points: pts((s) => s.goodput_rps ?? null) },
      { name: 'offered in window req/s', color: '#6e7781', dash: '4 3', points: pts((s) => s.scheduled_rps) },
    ],
    stages,
    doc,
    undefined,
  );
  const rows = stages
    .map(
      (s) =>
        `<tr><td>${num(s.value)}</td><td style="color:${COLORS[s.verdict] ?? '#000'}">${esc(s.verdict)}</td><td>${num(s.scheduled_rps)}</td><td>${num(s.achieved_rps)}</td><td>${num(s.goodput_rps ?? null)}</td><td>${num(s.ttft_p50_ms)}</td><td>${num(s.ttft_p95_ms)}</td><td>${num(s.ttft_p99_ms)}</td><td>${num(s.tpot_p95_ms)}</td><td>${num(s.success_rate)}</td><td>${esc(s.reason)}</td><td>${esc(s.run_dir ?? '-')}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sweep ${esc(doc.name)}</title>
<style>body{font:14px system-ui,sans-serif;margin:24px;max-width:1200px}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:3px 6px;font-size:12px;text-align:right}td:nth-child(10),td:nth-child(11){text-align:left}.charts{display:flex;flex-wrap:wrap;gap:16px}figure{margin:0}</style>
</head><body>
<h1>Sweep ${esc(doc.name)}: capacity of ${esc(doc.class)}</h1>
<p><b>Capacity:</b> ${doc.capacity === null ? 'none found' : `${num(doc.capacity)} ${esc(doc.unit)}`}; <b>bracket:</b> [${num(doc.bracket[0])}, ${num(doc.bracket[1])}]; <b>knee:</b> ${num(doc.knee.value)}</p>
<p>${esc(doc.answer)}</p>
<div class="charts">${latency}${throughput}</div>
<p>Points: <span style="color:${COLORS.pass}">● pass</span> <span style="color:${COLORS.fail}">● fail</span> <span style="color:${COLORS.client_limited}">● client-limited</span>. The green line marks the capacity, the red one the first failing value.</p>
<h2>Stages</h2>
<table><tr><th>value</th><th>verdict</th><th>offered req/s</th><th>achieved req/s</th><th>goodput req/s</th><th>p50 TTFT ms</th><th>p95 TTFT ms</th><th>p99 TTFT ms</th><th>p95 TPOT ms</th><th>success</th><th>reason</th><th>run</th></tr>
${rows}
</table>
<p>Stopped: ${esc(doc.stop_reason ?? '-')}</p>
</body></html>
`;
}

function chart(title: string, yUnit: string, series: Series[], stages: Stage[], doc: SweepDoc, sloLine: number | undefined): string {
  const xs = stages.map((s) => s.value);
  const ys = series.flatMap((s) => s.points.map((p) => p.y)).concat(sloLine === undefined ? [] : [sloLine]);
  const xMax = niceMax(Math.max(1e-9, ...xs));
  const yMax = niceMax(Math.max(1e-9, ...ys));
  const px = (x: number) => M.l + (x / xMax) * (W - M.l - M.r);
  const py = (y: number) => H - M.b - (y / yMax) * (H - M.t - M.b);
  const parts: string[] = [];
  for (let i = 0; i <= 5; i++) {
    const xv = (xMax * i) / 5;
    const yv = (yMax * i) / 5;
    parts.push(`<line x1="${px(xv)}" y1="${M.t}" x2="${px(xv)}" y2="${H - M.b}" stroke="#eaeef2"/>`);
    parts.push(`<text x="${px(xv)}" y="${H - M.b + 14}" font-size="10" text-anchor="middle">${num(xv)}</text>`);
    parts.push(`<line x1="${M.l}" y1="${py(yv)}" x2="${W - M.r}" y2="${py(yv)}" stroke="#eaeef2"/>`);
    parts.push(`<text x="${M.l - 4}" y="${py(yv) + 3}" font-size="10" text-anchor="end">${num(yv)}</text>`);
  }
  // The two labels sit on different lines: a narrow bracket puts the lines close together.
  const vline = (x: number | null, color: string, label: string, dy: number) =>
    x === null
      ? ''
      : `<line x1="${px(x)}" y1="${M.t}" x2="${px(x)}" y2="${H - M.b}" stroke="${color}" stroke-width="1.5" stroke-dasharray="6 3"/><text x="${px(x) + 3}" y="${M.t + dy}" font-size="10" fill="${color}">${label}</text>`;
  parts.push(vline(doc.bracket[0], COLORS.pass!, `capacity ${num(doc.bracket[0])}`, 48));
  parts.push(vline(doc.bracket[1], COLORS.fail!, `fails ${num(doc.bracket[1])}`, 62));
  if (sloLine !== undefined)
    parts.push(
      `<line x1="${M.l}" y1="${py(sloLine)}" x2="${W - M.r}" y2="${py(sloLine)}" stroke="#cf222e" stroke-width="1"/><text x="${W - M.r - 2}" y="${py(sloLine) - 3}" font-size="10" text-anchor="end" fill="#cf222e">SLO p95 ${num(sloLine)} ms</text>`,
    );
  series.forEach((s, i) => {
    if (s.points.length === 0) return;
    const d = s.points.map((p, j) => `${j === 0 ? 'M' : 'L'}${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(' ');
    parts.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`);
    for (const p of s.points) {
      const st = stages.find((x) => x.value === p.x);
      parts.push(
        `<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="3.5" fill="${COLORS[st?.verdict ?? ''] ?? s.color}"><title>${esc(s.name)} at ${num(p.x)}: ${num(p.y)} ${esc(yUnit)}</title></circle>`,
      );
    }
    parts.push(
      `<line x1="${M.l + 8}" y1="${M.t + 8 + i * 14}" x2="${M.l + 28}" y2="${M.t + 8 + i * 14}" stroke="${s.color}" stroke-width="2"/>`,
    );
    parts.push(`<text x="${M.l + 32}" y="${M.t + 12 + i * 14}" font-size="10">${esc(s.name)}</text>`);
  });
  parts.push(`<text x="${(M.l + W - M.r) / 2}" y="${H - 8}" font-size="11" text-anchor="middle">offered load (${esc(doc.unit)})</text>`);
  parts.push(
    `<text x="14" y="${(M.t + H - M.b) / 2}" font-size="11" text-anchor="middle" transform="rotate(-90 14 ${(M.t + H - M.b) / 2})">${esc(yUnit)}</text>`,
  );
  return `<figure><figcaption>${esc(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(title)}">${parts.join('')}</svg></figure>`;
}

// The axis ends at 1, 2 or 5 × 10^k above the largest value, so grid labels stay round.
export function niceMax(x: number): number {
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 5, 10]) if (m * p >= x * 1.05) return m * p;
  return 10 * p;
}

function num(x: number | null | undefined): string {
  if (x === null || x === undefined) return '-';
  return String(Math.round(x * 1000) / 1000);
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
