// The pieces every chart shares: escaping, the colour palette, the legend, and the <figure> that
// carries a chart's title and its one-sentence definition. Pure string builders.

/** Escapes text for HTML/SVG content and attribute values. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

// Okabe–Ito: distinguishable with the common colour-vision deficiencies (yellow left out: too pale on white).
const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#8C564B'];

/** The i-th series colour (cycles). */
export function colour(i: number): string {
  return PALETTE[i % PALETTE.length]!;
}

/** How a series line is drawn ('halo': wide and translucent, for a target that another line should sit inside). */
export type Dash = 'solid' | 'dashed' | 'dotted' | 'halo';

/** Stroke width and dash attributes of a line style (`width` for the plain styles). */
export function strokeAttrs(dash: Dash | undefined, width: number): string {
  if (dash === 'halo') return ' stroke-width="7" stroke-opacity="0.28"';
  const pattern = dash === 'dashed' ? ' stroke-dasharray="7 4"' : dash === 'dotted' ? ' stroke-dasharray="2 3"' : '';
  return ` stroke-width="${width}"${pattern}`;
}

/** One legend entry: a line sample, a dot, a whisker or a shaded box, then its label. */
export interface LegendItem {
  label: string;
  colour: string;
  mark: 'line' | 'dot' | 'box' | 'whisker' | 'bar';
  dash?: Dash;
}

const CHAR_PX = 6.6; // average glyph width at 11 px, to lay legend items out without measuring text

/** The legend as SVG, wrapped into rows within `width`; returns the markup and the height it used. */
export function legend(items: readonly LegendItem[], x0: number, y0: number, width: number): { svg: string; height: number } {
  const parts: string[] = [];
  let x = x0;
  let y = y0;
  for (const it of items) {
    const w = 26 + it.label.length * CHAR_PX + 16;
    if (x > x0 && x + w > x0 + width) {
      x = x0;
      y += 16;
    }
    parts.push(`<g class="legend-item">${legendMark(it, x, y)}<text x="${x + 24}" y="${y + 4}">${esc(it.label)}</text></g>`);
    x += w;
  }
  return { svg: `<g class="legend">${parts.join('')}</g>`, height: y - y0 + 16 };
}

function legendMark(it: LegendItem, x: number, y: number): string {
  switch (it.mark) {
    case 'line':
      return `<line x1="${x}" y1="${y}" x2="${x + 20}" y2="${y}" stroke="${it.colour}"${strokeAttrs(it.dash, 2)}/>`;
    case 'dot':
      return `<circle cx="${x + 10}" cy="${y}" r="3.5" fill="${it.colour}" fill-opacity="0.75"/>`;
    case 'box':
      return `<rect x="${x}" y="${y - 5}" width="20" height="10" fill="${it.colour}"/>`;
    case 'whisker':
      return `<line x1="${x}" y1="${y}" x2="${x + 20}" y2="${y}" stroke="${it.colour}" stroke-width="1.5"/><line x1="${x}" y1="${y - 4}" x2="${x}" y2="${y + 4}" stroke="${it.colour}" stroke-width="1.5"/><line x1="${x + 20}" y1="${y - 4}" x2="${x + 20}" y2="${y + 4}" stroke="${it.colour}" stroke-width="1.5"/>`;
    case 'bar':
      return `<line x1="${x + 10}" y1="${y - 6}" x2="${x + 10}" y2="${y + 6}" stroke="${it.colour}" stroke-width="3.5"/>`;
  }
}

/** A chart's text around its drawing: title, the one-sentence definition, then the SVG (or a note). */
export interface FigureText {
  /** Stable id, also the `data-chart` attribute the browser test looks for. */
  id: string;
  title: string;
  definition: string;
}

/** Wraps a chart body in its <figure> with the title and the definition of what is plotted. */
export function figure(t: FigureText, body: string): string {
  return `<figure class="chart" data-chart="${esc(t.id)}"><h3>${esc(t.title)}</h3><p class="definition">${esc(t.definition)}</p>${body}</figure>`;
}

/** The body of a chart that has nothing to draw: says why instead of drawing empty axes. */
export function emptyNote(message: string): string {
  return `<p class="no-data">${esc(message)}</p>`;
}

/** Opens an <svg> with a viewBox, scaled to its container's width. */
export function svgOpen(width: number, height: number, label: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(label)}"><title>${esc(label)}</title>`;
}

/** A coordinate rounded to 0.1 px (enough for any screen, and keeps the files small). */
export function px(v: number): string {
  return (Math.round(v * 10) / 10).toString();
}
