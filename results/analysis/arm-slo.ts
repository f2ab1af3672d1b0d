// Pure: the SLO verdict of each arm, from its runs' own verdicts (run.json classes.<c>.slo_verdict).
// A verdict is never recomputed from pooled figures: an arm met a class's SLO only when every one of
// its runs did, and a single missed run makes the arm's verdict missed — with the counts beside it.
import type { Row } from './rows.js';
import { isVerdictColumn } from './rows.js';

/** by_arm.<arm>.slo_verdict.<class>. */
export interface ArmClassVerdict {
  verdict: 'met' | 'missed' | 'not_evaluable';
  runs_met: number;
  runs_missed: number;
  runs_not_evaluable: number;
}

/** Per class with a verdict in any run: the arm's verdict; empty when no run carries one. */
export function armVerdicts(rows: readonly Row[]): Record<string, ArmClassVerdict> {
  const out: Record<string, ArmClassVerdict> = {};
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r).filter(isVerdictColumn)))];
  for (const col of columns) {
    const vs = rows.map((r) => r[col]);
    if (vs.every((v) => v === null || v === undefined)) continue;
    const met = vs.filter((v) => v === 'met').length;
    const missed = vs.filter((v) => v === 'missed').length;
    out[col.slice(0, -'_slo_verdict'.length)] = {
      verdict: missed > 0 ? 'missed' : met === rows.length ? 'met' : 'not_evaluable',
      runs_met: met,
      runs_missed: missed,
      runs_not_evaluable: rows.length - met - missed,
    };
  }
  return out;
}

/** One line per arm and class for the terminal: "realtime with batch: realtime SLO MISSED in 3 of 3 runs". */
export function armVerdictLines(arms: Record<string, Record<string, unknown>>): string[] {
  return Object.entries(arms).flatMap(([arm, s]) =>
    Object.entries((s.slo_verdict ?? {}) as Record<string, ArmClassVerdict>).map(([cls, v]) => {
      const runs = v.runs_met + v.runs_missed + v.runs_not_evaluable;
      const what =
        v.verdict === 'missed'
          ? `SLO MISSED in ${v.runs_missed} of ${runs} runs`
          : v.verdict === 'met'
            ? `SLO met in all ${runs} runs`
            : `SLO not evaluable in ${v.runs_not_evaluable} of ${runs} runs`;
      return `  ${arm}: ${cls} ${what}`;
    }),
  );
}

/** Definitions for analysis.json. */
export const ARM_VERDICT_DEFINITIONS: Record<string, string> = {
  'by_arm.<arm>.slo_verdict.<class>':
    "the arm's SLO verdict for a class declaring an SLO, from its runs' own run.json slo_verdict (never from pooled figures): missed when any run missed it, met when every run met it, otherwise not_evaluable; runs_met, runs_missed and runs_not_evaluable count the runs",
  'runs[].<class>_slo_verdict': "the run's run.json classes.<class>.slo_verdict.verdict (met, missed, not_evaluable; null without an SLO)",
};
