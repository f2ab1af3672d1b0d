// The top of a run report: did each class meet its SLO? One line per class as the CLI prints it,
// then per window each criterion against its bound with goodput beside throughput, and one line
// saying what the two validity gates below mean — answer first, evidence after.

import type { ClassVerdict, SloVerdictValue } from '../../figures/slo-verdict.js';
import { criterionText, verdictLine } from '../../figures/slo-verdict.js';
import { formatFigure } from '../../shared/format.js';
import { GATE_MEANINGS } from '../run-summary.js';
import type { Obj } from './fields.js';
import { arr, numOrNull, obj, strOrNull } from './fields.js';
import { badge, table } from './html.js';
import { esc } from './svg.js';
import { whereTtftWent } from './ttft-parts.js';

const TONE: Record<SloVerdictValue, 'good' | 'bad' | 'none'> = { met: 'good', missed: 'bad', not_evaluable: 'none' };
const WORD: Record<SloVerdictValue, string> = { met: 'SLO met', missed: 'SLO MISSED', not_evaluable: 'not evaluable' };

/** The verdict section, or '' when no class declares an SLO (or run.json predates verdicts). */
export function sloSection(run: Obj): string {
  const classes = obj(run.classes);
  const judged = Object.keys(classes).flatMap((name) => {
    const v = obj(classes[name]).slo_verdict;
    return typeof obj(v).verdict === 'string' ? [{ name, v: v as ClassVerdict, windows: obj(obj(classes[name]).windows) }] : [];
  });
  if (judged.length === 0) return '';
  const lines = judged
    .map(({ name, v }) => {
      // Beside the verdict, where the slow requests' time went, when the server's spans say.
      const where = whereTtftWent(run, name);
      return `<p class="slo-line">${badge(WORD[v.verdict], TONE[v.verdict])} ${esc(verdictLine(name, v))}${where ? ` — ${esc(where)}` : ''}</p>`;
    })
    .join('');
  const rows = judged.flatMap(({ name, v, windows }) =>
    Object.entries(v.windows).map(([w, wv]) => {
      const m = obj(windows[w]);
      return [
        `<strong>${esc(name)}</strong>`,
        esc(w),
        badge(WORD[wv.verdict], TONE[wv.verdict]),
        esc(
          wv.reason ??
            arr(wv.criteria)
              .map((c) => criterionText(c as ClassVerdict['windows'][string]['criteria'][number]))
              .join('; '),
        ),
        esc(formatFigure(numOrNull(m.goodput_rps), 'req/s')),
        esc(formatFigure(numOrNull(m.throughput_rps), 'req/s')),
      ];
    }),
  );
  const defs = obj(run.field_definitions);
  const goodputDef = strOrNull(defs['classes.<c>.windows.<w>.goodput_rps']);
  return [
    `<h2 id="slo-verdict">SLO verdict</h2>`,
    lines,
    table(['class', 'window', 'verdict', 'criteria (figure against bound)', 'goodput', 'throughput'], rows, 'slo'),
    '<p class="definition">Each *_p95_ms bound is judged on the exact nearest-rank p95 of every request of the window (by intended send time), a failed request ranked +∞, so a failure never meets a latency bound; a bound no successful request could be measured on (TPOT without counted tokens, 1-token outputs) is not evaluable, never missed; success counts 429, 5xx and timeouts as misses. ',
    goodputDef ? `Goodput: ${esc(goodputDef)}. ` : '',
    'Throughput: successful requests that finished inside the window, per second.</p>',
    `<p class="definition"><strong>Data quality</strong>: ${esc(GATE_MEANINGS.data_quality)}. <strong>SLO proof</strong>: ${esc(GATE_MEANINGS.slo_proof)}.</p>`,
  ].join('');
}
