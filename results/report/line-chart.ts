// A time-series line chart as an SVG string: labelled axes with units, shaded plan windows,
// optional horizontal reference lines, a legend, and each series as one polyline (with a dot at
// every point, so sparse data, e.g. seconds in which few requests finished, stays visible).
import { formatNumber, linearScale, niceDomain } from './scale.js';
import type { Dash, FigureText, LegendItem } from './svg.js';
import { emptyNote, esc, figure, legend, px, strokeAttrs, svgOpen } from './svg.js';

/** One line: points in data units, x ascending. */
export interface LineSeries {
  label: string;
  colour: string;
  dash?: Dash;
  points: readonly (readonly [number, number])[];
  /** A colour per point (e.g. a sweep stage's verdict), drawn larger; the line keeps `colour`. */
  pointColours?: readonly string[];
  /** A tooltip per point. */
  pointTitles?: readonly string[];
}

/** A shaded x range, e.g. a plan window. */
export interface Band {
  label: string;
  fromX: number;
  toX: number;
  /** A drain band (after the plan's end, while requests still finish) is hatched in its own colour. */
  kind?: 'window' | 'drain';
}

/** A horizontal line at a meaningful value (e.g. saturation 1.0 = full). */
export interface RefLine {
  y: number;
  label: string;
}

/** A vertical line at a meaningful x (e.g. a sweep's capacity), labelled at the top of the plot. */
export interface XMarker {
  x: number;
  label: string;
  colour: string;
}

/** Everything one line chart shows. */
export interface LineChartSpec extends FigureText {
  /** Axis titles, with units, e.g. "time since run start (s)". */
  xLabel: string;
  yLabel: string;
  series: readonly LineSeries[];
  bands?: readonly Band[];
  refLines?: readonly RefLine[];
  markers?: readonly XMarker[];
  /** Fixed x range (e.g. 0 … run length); otherwise the data's. */
  xDomain?: readonly [number, number];
  /** Shown instead of the drawing when no series has a point. */
  emptyMessage: string;
}

const W = 860;
const PLOT_H = 220;
const LEFT = 72;
const RIGHT = 20;
const BOTTOM = 46;
const BAND_FILL = '#8a9bb0';
const DRAIN_FILL = '#c08a3e';
/** About the width of one character of a band label (11 px sans-serif). */
const LABEL_CHAR_PX = 6.5;

/** The chart as a <figure> (title, definition, SVG), or the figure with a note when there is no data. */
export function renderLineChart(spec: LineChartSpec): string {
  const drawn = spec.series.filter((s) => s.points.length > 0);
  if (drawn.length === 0) return figure(spec, emptyNote(spec.emptyMessage));
  const bands = spec.bands ?? [];
  const items: LegendItem[] = drawn.map((s) => ({ label: s.label, colour: s.colour, mark: 'line', ...(s.dash ? { dash: s.dash } : {}) }));
  if (bands.some((b) => b.kind !== 'drain')) items.push({ label: 'plan windows (shaded)', colour: BAND_FILL, mark: 'box' });
  if (bands.some((b) => b.kind === 'drain'))
    items.push({ label: 'drain: after the plan, until the last request finished (shaded)', colour: DRAIN_FILL, mark: 'box' });
  const leg = legend(items, LEFT, 14, W - LEFT - RIGHT);
  const top = 14 + leg.height + 8;
  const height = top + PLOT_H + BOTTOM;
  const xs = drawn.flatMap((s) => s.points.map((p) => p[0]));
  const ys = [...drawn.flatMap((s) => s.points.map((p) => p[1])), ...(spec.refLines ?? []).map((r) => r.y)];
  const xDomain = spec.xDomain ?? ([Math.min(...xs), Math.max(...xs)] as const);
  const x = linearScale(xDomain, LEFT, W - RIGHT, 10);
  const y = linearScale(niceDomain(Math.min(0, ...ys), Math.max(...ys)), top + PLOT_H, top, 5);
  const clip = `clip-${spec.id}`;
  const parts = [
    svgOpen(W, height, spec.title),
    `<defs><clipPath id="${esc(clip)}"><rect x="${LEFT}" y="${top}" width="${W - LEFT - RIGHT}" height="${PLOT_H}"/></clipPath></defs>`,
    leg.svg,
    bandsSvg(bands, x.at, top, clip, xDomain),
    gridAndAxes(x.ticks, y.ticks, x.at, y.at, top, spec),
    refLinesSvg(spec.refLines ?? [], y.at),
    markersSvg(spec.markers ?? [], x.at, top),
    // The x range drawn, for readers and tests: the axis must reach the end of the drain.
    `<g class="plot" data-x-from="${xDomain[0]}" data-x-to="${xDomain[1]}" clip-path="url(#${esc(clip)})">${drawn.map((s) => seriesSvg(s, x.at, y.at)).join('')}</g>`,
    '</svg>',
  ];
  return figure(spec, parts.join(''));
}

function bandsSvg(
  bands: readonly Band[],
  at: (v: number) => number,
  top: number,
  clip: string,
  xDomain: readonly [number, number],
): string {
  return bands
    .filter((b) => b.toX > xDomain[0] && b.fromX < xDomain[1])
    .map((b) => {
      const x0 = at(Math.max(b.fromX, xDomain[0]));
      const x1 = at(Math.min(b.toX, xDomain[1]));
      const drain = b.kind === 'drain';
      // A label wider than its band (a drain of a fraction of a second) would be cut mid-word: the
      // legend names it instead.
      const fits = x1 - x0 >= LABEL_CHAR_PX * b.label.length + 8;
      const label = fits ? `<text class="band-label" x="${px(x0 + 4)}" y="${top + 12}">${esc(b.label)}</text>` : '';
      return `<g class="band${drain ? ' drain' : ''}" clip-path="url(#${esc(clip)})"><rect x="${px(x0)}" y="${top}" width="${px(x1 - x0)}" height="${PLOT_H}" fill="${drain ? DRAIN_FILL : BAND_FILL}" fill-opacity="${drain ? 0.18 : 0.14}"/>${label}</g>`;
    })
    .join('');
}

function gridAndAxes(
  xTicks: readonly number[],
  yTicks: readonly number[],
  xAt: (v: number) => number,
  yAt: (v: number) => number,
  top: number,
  spec: LineChartSpec,
): string {
  const bottom = top + PLOT_H;
  const parts: string[] = ['<g class="axes">'];
  for (const t of yTicks) {
    const yy = px(yAt(t));
    parts.push(`<line class="grid" x1="${LEFT}" x2="${W - RIGHT}" y1="${yy}" y2="${yy}"/>`);
    parts.push(`<text class="tick" x="${LEFT - 6}" y="${yy}" dy="0.32em" text-anchor="end">${formatNumber(t)}</text>`);
  }
  for (const t of xTicks) {
    const xx = px(xAt(t));
    parts.push(`<line class="tick-mark" x1="${xx}" x2="${xx}" y1="${bottom}" y2="${bottom + 4}"/>`);
    parts.push(`<text class="tick" x="${xx}" y="${bottom + 16}" text-anchor="middle">${formatNumber(t)}</text>`);
  }
  parts.push(`<line class="axis" x1="${LEFT}" x2="${W - RIGHT}" y1="${bottom}" y2="${bottom}"/>`);
  parts.push(`<line class="axis" x1="${LEFT}" x2="${LEFT}" y1="${top}" y2="${bottom}"/>`);
  parts.push(`<text class="axis-title" x="${(LEFT + W - RIGHT) / 2}" y="${bottom + 38}" text-anchor="middle">${esc(spec.xLabel)}</text>`);
  parts.push(
    `<text class="axis-title" transform="translate(16 ${top + PLOT_H / 2}) rotate(-90)" text-anchor="middle">${esc(spec.yLabel)}</text>`,
  );
  parts.push('</g>');
  return parts.join('');
}

function refLinesSvg(lines: readonly RefLine[], yAt: (v: number) => number): string {
  return lines
    .map((r) => {
      const yy = px(yAt(r.y));
      return `<g class="ref-line"><line x1="${LEFT}" x2="${W - RIGHT}" y1="${yy}" y2="${yy}" stroke="#555" stroke-dasharray="4 3"/><text class="tick" x="${W - RIGHT - 4}" y="${yy}" dy="-0.35em" text-anchor="end">${esc(r.label)}</text></g>`;
    })
    .join('');
}

// Labels on successive rows: two markers close together (a narrow bracket) must not overprint.
function markersSvg(markers: readonly XMarker[], xAt: (v: number) => number, top: number): string {
  return markers
    .map((m, i) => {
      const xx = px(xAt(m.x));
      return `<g class="x-marker"><line x1="${xx}" x2="${xx}" y1="${top}" y2="${top + PLOT_H}" stroke="${m.colour}" stroke-width="1.5" stroke-dasharray="6 3"/><text x="${px(xAt(m.x) + 3)}" y="${top + 12 + i * 14}" fill="${m.colour}">${esc(m.label)}</text></g>`;
    })
    .join('');
}

function seriesSvg(s: LineSeries, xAt: (v: number) => number, yAt: (v: number) => number): string {
  const pts = s.points.map(([a, b]) => `${px(xAt(a))},${px(yAt(b))}`);
  const withDots = s.points.length <= 600 && s.dash !== 'halo';
  const dot = (p: string, i: number): string => {
    const [cx, cy] = p.split(',');
    const fill = s.pointColours?.[i];
    const title = s.pointTitles?.[i];
    return `<circle cx="${cx}" cy="${cy}" r="${fill ? 3.5 : 1.8}"${fill ? ` fill="${fill}"` : ''}>${title ? `<title>${esc(title)}</title>` : ''}</circle>`;
  };
  const dots = withDots ? pts.map(dot).join('') : '';
  return `<g class="series" data-series="${esc(s.label)}" data-points="${s.points.length}"><title>${esc(s.label)}</title><polyline points="${pts.join(' ')}" fill="none" stroke="${s.colour}" stroke-linejoin="round"${strokeAttrs(s.dash, 1.8)}/><g fill="${s.colour}">${dots}</g></g>`;
}
