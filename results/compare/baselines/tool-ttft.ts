// Pure: the candidate's TTFT as a baseline tool defines it. vLLM bench serve, AIPerf and GuideLLM's
// time_to_first_token_ms stop at the first token of any kind, reasoning included, measured from the
// actual send; loadfleet's TTFT stops at the first content token, on the class's SLO basis. The
// candidate's figure is re-read from its own stamps to match, or refused with the reason when its
// records cannot give it or the baseline's file does not say which token it stops at.
import { latencyFigureKeys } from '../figure-keys.js';
import type { RunSample, WindowSample } from '../figures.js';
import type { ForeignBaseline } from './types.js';

/** The candidate's runs with class cls's TTFT on the baseline tool's definition, and a sentence saying what was done. */
export function candidateAsTool(runs: readonly RunSample[], cls: string, fb: ForeignBaseline): { runs: RunSample[]; note: string } {
  const ends = fb.ttftEnds;
  let refused: string | null =
    ends === null
      ? `${fb.tool} does not say whether its TTFT stops at the first content token or at the first token of any kind (reasoning included), so TTFT is not compared`
      : null;
  const mapped = runs.map((r) => {
    const byWindow = r.classes[cls];
    if (!byWindow) return r;
    const windows: Record<string, WindowSample> = {};
    for (const [w, s] of Object.entries(byWindow)) {
      const series = ends === null ? null : ends === 'first_output' ? s.ttftFromSend?.first_output : s.ttftFromSend?.first_content;
      if (ends !== null && !series)
        refused ??=
          ends === 'first_output'
            ? `${fb.tool}'s TTFT stops at the first token of any kind, reasoning included, and a successful request of run ${r.runId} carries no first-output stamp (first_output_unix_ns), so the candidate's figure cannot be read on that definition: TTFT is not compared`
            : `run ${r.runId} holds no TTFT series from the actual send`;
      windows[w] = series
        ? {
            ...s,
            ttftBasis: 'sent' as const,
            series: { ...s.series, ttft: series },
            values: { ...s.values, ttft: series.filter((v) => Number.isFinite(v)).sort() },
          }
        : s;
    }
    return { ...r, classes: { ...r.classes, [cls]: windows } };
  });
  if (refused !== null) {
    const reason = refused;
    const out = runs.map((r) => {
      const byWindow = r.classes[cls];
      if (!byWindow) return r;
      const windows = Object.fromEntries(
        Object.entries(byWindow).map(([w, s]) => [
          w,
          { ...s, fixed: { ...s.fixed, ...Object.fromEntries(latencyFigureKeys('ttft').map((k) => [k, { value: null, reason }])) } },
        ]),
      );
      return { ...r, classes: { ...r.classes, [cls]: windows } };
    });
    return { runs: out, note: reason };
  }
  return {
    runs: mapped,
    note:
      ends === 'first_output'
        ? `TTFT is compared as ${fb.tool} defines it: from the actual send to the first token of any kind, reasoning included (the candidate's first_output_unix_ns), not on the class's SLO basis`
        : `TTFT is compared as ${fb.tool} defines it: from the actual send to the first content token (the candidate's first_content_unix_ns), not on the class's SLO basis`,
  };
}
