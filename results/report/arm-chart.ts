// The arm comparison as an SVG string: one row per arm, the median as a bar, a whisker from the
// minimum to the maximum over repeats, and every repeat's own value as a dot, so the spread is
// seen rather than summarised away. The value axis turns logarithmic (and says so) when the arms
// differ by more than 20×, where a linear axis would flatten the smaller arm to a point.
import { formatNumber, linearScale, logScale, niceDomain, type Scale, wantsLog } from './scale.js';
import type { FigureText } from './svg.js';
import { colour, emptyNote, esc, figure, legend, px, svgOpen } from './svg.js';

/** One arm's figure: median/min/max over repeats plus each repeat's value. */
export interface ArmValue {
  arm: string;
  median: number | null;
  min: number | null;
  max: number | null;
  repeats: readonly { label: string; value: number }[];
}

/** Everything one arm chart shows. */
export interface ArmChartSpec extends FigureText {
  /** The value axis title, with its unit. */
  valueLabel: string;
  /** The unit appended to the numbers in row labels ('' for none). */
  unit: string;
  arms: readonly ArmValue[];
  /** Drawing width in SVG units: 860 for a full-width chart, 420 for one in a two-column grid (rows then name the arm only). */
  width?: number;
  /**
   * 'shared': one value axis for every arm (linear, or log past 20× apart) so arms compare;
   * 'per-arm': each arm on its own linear axis around its repeats, so their spread can be seen.
   */
  axis?: 'shared' | 'per-arm';
  emptyMessage: string;
}

const SIDE = 16;
const INK = '#222';

/** The chart as a <figure>, or the figure with a note when no arm has a value. */
export function renderArmChart(spec: ArmChartSpec): string {
  const values = spec.arms.flatMap(armNumbers);
  if (values.length === 0) return figure(spec, emptyNote(spec.emptyMessage));
  const w = spec.width ?? 860;
  const perArm = spec.axis === 'per-arm';
  const leg = legend(
    [
      { label: 'median of repeats', colour: INK, mark: 'bar' },
      { label: 'min – max', colour: INK, mark: 'whisker' },
      { label: 'one repeat', colour: '#666', mark: 'dot' },
    ],
    SIDE,
    14,
    w - 2 * SIDE,
  );
  const top = 14 + leg.height + 4;
  const rowH = perArm ? 74 : w > 600 ? 50 : 42;
  const plotBottom = top + spec.arms.length * rowH;
  const x0 = SIDE + 6;
  const x1 = w - SIDE - 10;
  const log = !perArm && wantsLog(values);
  const shared = log
    ? logScale(Math.min(...values), Math.max(...values), x0, x1)
    : linearScale(niceDomain(Math.min(0, ...values), Math.max(...values)), x0, x1, w > 600 ? 8 : 4);
  const rows = spec.arms.map((a, i) => {
    const rowTop = top + i * rowH;
    const scale = perArm ? ownScale(a, x0, x1) : shared;
    const row = armRow(a, i, rowTop, scale, spec.unit, w > 600);
    if (!perArm || !scale) return row;
    return `${row}${ticks(scale, rowTop + 50, rowTop + 22, rowTop + 50)}<line class="axis" x1="${x0}" x2="${x1}" y1="${rowTop + 50}" y2="${rowTop + 50}"/>`;
  });
  const axisTitle = perArm ? `${spec.valueLabel} — each arm on its own scale` : `${spec.valueLabel}${log ? ' — log scale' : ''}`;
  const parts = [
    svgOpen(w, plotBottom + (perArm ? 20 : 46), spec.title),
    leg.svg,
    perArm
      ? ''
      : `${ticks(shared, plotBottom, top, plotBottom)}<line class="axis" x1="${SIDE}" x2="${w - SIDE}" y1="${plotBottom}" y2="${plotBottom}"/>`,
    `<text class="axis-title" x="${w / 2}" y="${plotBottom + (perArm ? 12 : 36)}" text-anchor="middle">${esc(axisTitle)}</text>`,
    ...rows,
    '</svg>',
  ];
  return figure(spec, parts.join(''));
}

function armNumbers(a: ArmValue): number[] {
  return [a.median, a.min, a.max, ...a.repeats.map((r) => r.value)].filter(isNum);
}

// A linear axis around one arm's values, padded so the extreme dots sit inside it.
function ownScale(a: ArmValue, x0: number, x1: number): Scale | null {
  const v = armNumbers(a);
  if (v.length === 0) return null;
  const lo = Math.min(...v);
  const hi = Math.max(...v);
  const pad = (hi - lo) * 0.25 || Math.abs(hi) * 0.05 || 1;
  return linearScale(niceDomain(lo - pad, hi + pad, 6), x0, x1, 6);
}

function ticks(scale: Scale, labelY: number, gridTop: number, gridBottom: number): string {
  const parts = ['<g class="axes">'];
  for (const t of scale.ticks) {
    const xx = px(scale.at(t));
    parts.push(`<line class="grid" x1="${xx}" x2="${xx}" y1="${gridTop}" y2="${gridBottom}"/>`);
    parts.push(`<text class="tick" x="${xx}" y="${labelY + 15}" text-anchor="middle">${formatNumber(t)}</text>`);
  }
  parts.push('</g>');
  return parts.join('');
}

function armRow(a: ArmValue, index: number, rowTop: number, scale: Scale | null, unit: string, withSummary: boolean): string {
  const c = colour(index);
  const yMid = rowTop + 32;
  const u = unit ? ` ${unit}` : '';
  const summary = isNum(a.median)
    ? ` — median ${formatNumber(a.median)}${u} (min ${formatNumber(a.min)}, max ${formatNumber(a.max)}), ${a.repeats.length} repeat${a.repeats.length === 1 ? '' : 's'}`
    : ' — no value';
  const parts = [`<g class="arm" data-arm="${esc(a.arm)}" data-repeats="${a.repeats.length}">`];
  parts.push(
    `<text class="arm-label" x="${SIDE}" y="${rowTop + 13}"><tspan class="arm-name">${esc(a.arm)}</tspan>${withSummary ? esc(summary) : ''}</text>`,
  );
  if (scale && isNum(a.min) && isNum(a.max)) {
    const x0 = px(scale.at(a.min));
    const x1 = px(scale.at(a.max));
    parts.push(
      `<g class="whisker" stroke="${INK}" stroke-width="1.5"><line x1="${x0}" x2="${x1}" y1="${yMid}" y2="${yMid}"/><line x1="${x0}" x2="${x0}" y1="${yMid - 7}" y2="${yMid + 7}"/><line x1="${x1}" x2="${x1}" y1="${yMid - 7}" y2="${yMid + 7}"/></g>`,
    );
  }
  if (scale && isNum(a.median)) {
    const xm = px(scale.at(a.median));
    parts.push(`<line class="median" x1="${xm}" x2="${xm}" y1="${yMid - 12}" y2="${yMid + 12}" stroke="${INK}" stroke-width="3.5"/>`);
  }
  // Repeats are spread a little vertically so equal values stay countable.
  a.repeats.forEach((r, k) => {
    if (!scale) return;
    const dy = (k - (a.repeats.length - 1) / 2) * 5;
    parts.push(
      `<circle class="repeat" cx="${px(scale.at(r.value))}" cy="${px(yMid + dy)}" r="3.6" fill="${c}" fill-opacity="0.75" stroke="#fff" stroke-width="0.8"><title>${esc(`${a.arm}, ${r.label}: ${formatNumber(r.value)}${u}`)}</title></circle>`,
    );
  });
  parts.push('</g>');
  return parts.join('');
}

function isNum(v: number | null | undefined): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}
