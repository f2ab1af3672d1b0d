// The throughput–interactivity Pareto chart as an SVG scatter: one point per sweep stage or
// experiment arm, each labelled, SLO-meeting points filled and the others hollow, the front over
// every point as a line and the front over the SLO-meeting points (the usable frontier) as a
// dashed line. Reads the `pareto` section sweep.json and analysis.json write. Pure.
import { arr, boolOrNull, numOrNull, obj, strOrNull } from './fields.js';
import { formatNumber, linearScale, niceDomain } from './scale.js';
import type { LegendItem } from './svg.js';
import { emptyNote, esc, figure, legend, px, svgOpen } from './svg.js';

const W = 860;
const PLOT_H = 300;
const LEFT = 72;
const RIGHT = 24;
const BOTTOM = 46;
const MET = '#1a7f37';
const MISSED = '#cf222e';
const UNJUDGED = '#6e7781';
const FRONT = '#0072B2';

interface Point {
  label: string;
  x: number;
  y: number;
  meets: boolean | null;
}

const AXIS_TITLES: Record<string, string> = {
  output_tok_s_per_user: 'output tokens/s per user (1000 / p50 TPOT)',
  output_tok_s_per_accelerator: 'output tokens/s per accelerator',
  output_tok_s: 'output tokens/s (whole deployment)',
};

/** The chart's figure: `what` names the points ("stage", "arm"). */
export function renderParetoChart(pareto: unknown, id: string, what: string): string {
  const p = obj(pareto);
  const xName = strOrNull(p.x) ?? 'output_tok_s_per_user';
  const yName = strOrNull(p.y) ?? 'output_tok_s_per_accelerator';
  const text = {
    id,
    title: 'Throughput vs interactivity: the Pareto front',
    definition: `one point per ${what}: x = ${AXIS_TITLES[xName] ?? xName}, y = ${AXIS_TITLES[yName] ?? yName}; the solid line joins the ${what}s no other beats on both (the front), the dashed line the front over the ${what}s that met the SLO (the usable frontier); filled points met the SLO, hollow ones missed it, grey ones were not judged`,
  };
  const points: Point[] = arr(p.points).flatMap((raw) => {
    const q = obj(raw);
    const x = numOrNull(q.x);
    const y = numOrNull(q.y);
    return x === null || y === null ? [] : [{ label: strOrNull(q.label) ?? '?', x, y, meets: boolOrNull(q.meets_slo) }];
  });
  const notPlotted = arr(p.not_plotted).map(obj);
  const left =
    notPlotted.length > 0
      ? `<p class="no-data">Not plotted: ${notPlotted.map((n) => `${esc(String(n.label))} (${esc(String(n.reason))})`).join('; ')}</p>`
      : '';
  if (points.length === 0) return figure(text, emptyNote(`No ${what} has both a per-user rate and a throughput to plot.`) + left);
  return figure(text, scatter(points, labels(p.front), labels(p.slo_front), xName, yName) + left);
}

function labels(v: unknown): string[] {
  return arr(v).filter((x): x is string => typeof x === 'string');
}

function scatter(points: readonly Point[], front: readonly string[], sloFront: readonly string[], xName: string, yName: string): string {
  const items: LegendItem[] = [
    { label: 'met the SLO', colour: MET, mark: 'dot' },
    { label: 'missed the SLO (hollow)', colour: MISSED, mark: 'dot' },
    { label: 'Pareto front', colour: FRONT, mark: 'line' },
    { label: 'front of the SLO-meeting points', colour: MET, mark: 'line', dash: 'dashed' },
  ];
  const leg = legend(items, LEFT, 14, W - LEFT - RIGHT);
  const top = 14 + leg.height + 8;
  const bottom = top + PLOT_H;
  const x = linearScale(niceDomain(0, Math.max(...points.map((q) => q.x))), LEFT, W - RIGHT, 8);
  const y = linearScale(niceDomain(0, Math.max(...points.map((q) => q.y))), bottom, top, 5);
  const line = (names: readonly string[], colour: string, dashed: boolean, cls: string): string => {
    const pts = names.flatMap((n) => points.filter((q) => q.label === n)).map((q) => `${px(x.at(q.x))},${px(y.at(q.y))}`);
    if (pts.length < 2) return '';
    return `<polyline class="${cls}" points="${pts.join(' ')}" fill="none" stroke="${colour}" stroke-width="${dashed ? 1.5 : 2}"${dashed ? ' stroke-dasharray="6 4"' : ''}/>`;
  };
  const axes = [
    ...y.ticks.map(
      (t) =>
        `<line class="grid" x1="${LEFT}" x2="${W - RIGHT}" y1="${px(y.at(t))}" y2="${px(y.at(t))}"/><text class="tick" x="${LEFT - 6}" y="${px(y.at(t))}" dy="0.32em" text-anchor="end">${formatNumber(t)}</text>`,
    ),
    ...x.ticks.map(
      (t) =>
        `<line class="tick-mark" x1="${px(x.at(t))}" x2="${px(x.at(t))}" y1="${bottom}" y2="${bottom + 4}"/><text class="tick" x="${px(x.at(t))}" y="${bottom + 16}" text-anchor="middle">${formatNumber(t)}</text>`,
    ),
    `<line class="axis" x1="${LEFT}" x2="${W - RIGHT}" y1="${bottom}" y2="${bottom}"/><line class="axis" x1="${LEFT}" x2="${LEFT}" y1="${top}" y2="${bottom}"/>`,
    `<text class="axis-title" x="${(LEFT + W - RIGHT) / 2}" y="${bottom + 38}" text-anchor="middle">${esc(AXIS_TITLES[xName] ?? xName)}</text>`,
    `<text class="axis-title" transform="translate(16 ${top + PLOT_H / 2}) rotate(-90)" text-anchor="middle">${esc(AXIS_TITLES[yName] ?? yName)}</text>`,
  ];
  const dots = points.map((q) => {
    const colour = q.meets === true ? MET : q.meets === false ? MISSED : UNJUDGED;
    const fill = q.meets === false ? `fill="#fff" stroke="${colour}" stroke-width="2"` : `fill="${colour}"`;
    const cx = x.at(q.x);
    // Labels of points near the right edge go to their left, so they stay inside the plot.
    const right = cx < W - RIGHT - 120;
    return `<g class="point" data-label="${esc(q.label)}" data-meets-slo="${q.meets}"><circle cx="${px(cx)}" cy="${px(y.at(q.y))}" r="5" ${fill}><title>${esc(`${q.label}: ${formatNumber(q.x)} per user, ${formatNumber(q.y)} throughput`)}</title></circle><text class="point-label" x="${px(cx + (right ? 8 : -8))}" y="${px(y.at(q.y) - 8)}" text-anchor="${right ? 'start' : 'end'}">${esc(q.label)}</text></g>`;
  });
  return [
    svgOpen(W, bottom + BOTTOM, 'Throughput vs interactivity: the Pareto front'),
    leg.svg,
    `<g class="axes">${axes.join('')}</g>`,
    line(front, FRONT, false, 'pareto-front'),
    line(sloFront, MET, true, 'pareto-slo-front'),
    `<g class="points">${dots.join('')}</g>`,
    '</svg>',
  ].join('');
}
