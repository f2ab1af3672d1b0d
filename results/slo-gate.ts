// The exit-code gate of --fail-on-slo: reads the verdicts a written run.json holds, so the gate
// judges exactly what the artifact says (and works the same on a run directory written earlier).
// A missed SLO fails the gate; a not_evaluable one fails it only when asked (--fail-on-not-evaluable):
// by default the gate states it and passes, since the run could not show the SLO was missed.
import { ExitCode } from '../shared/errors.js';
import { readRunJson } from '../shared/run-read.js';

/** A class whose verdict the gate reports: the windows it missed in, or could not be judged in and why. */
export interface GatedClass {
  className: string;
  windows: string[];
  reason?: string;
}

/** The classes of a run directory whose slo_verdict is missed, and those whose verdict is not_evaluable. */
export async function sloOutcomes(runDir: string): Promise<{ missed: GatedClass[]; notEvaluable: GatedClass[] }> {
  const run = await readRunJson(runDir);
  const entries = Object.entries(run.classes);
  const missed = entries
    .filter(([, c]) => c.slo_verdict?.verdict === 'missed')
    .map(([className, c]) => ({ className, windows: c.slo_verdict!.missed_in }));
  const notEvaluable = entries
    .filter(([, c]) => c.slo_verdict?.verdict === 'not_evaluable')
    .map(([className, c]) => {
      const v = c.slo_verdict!;
      const windows = v.not_evaluable_in ?? [];
      return { className, windows, reason: v.windows[windows[0] ?? 'all']?.reason ?? 'no request to judge' };
    });
  return { missed, notEvaluable };
}

/** The classes of a run directory whose slo_verdict is missed, with the windows they missed in. */
export async function missedSlos(runDir: string): Promise<{ className: string; windows: string[] }[]> {
  return (await sloOutcomes(runDir)).missed;
}

/** How --fail-on-slo treats a run's verdicts. */
export interface SloGatePolicy {
  failOnSlo: boolean;
  /** Also fail on not_evaluable (default false: stated, not failed). */
  failOnNotEvaluable?: boolean;
}

/**
 * The exit code once a run is written: an abort keeps its own code; otherwise, with --fail-on-slo,
 * any missed SLO (or, with --fail-on-not-evaluable, any not_evaluable one) gives SLO_MISSED, and a
 * line saying why (for the CI log).
 */
export async function sloExitCode(
  runDir: string,
  status: string,
  policy: boolean | SloGatePolicy,
  say: (line: string) => void,
): Promise<number> {
  const p: SloGatePolicy = typeof policy === 'boolean' ? { failOnSlo: policy } : policy;
  if (status === 'aborted') return ExitCode.ABORTED;
  if (!p.failOnSlo) return ExitCode.OK;
  const { missed, notEvaluable } = await sloOutcomes(runDir);
  const open = notEvaluable.map((m) => `${m.className} (${m.reason})`).join(', ');
  const failOpen = p.failOnNotEvaluable === true && notEvaluable.length > 0;
  if (missed.length === 0 && !failOpen) {
    if (notEvaluable.length > 0)
      say(`exit 0 (--fail-on-slo): no SLO missed; not evaluable, so not gated (add --fail-on-not-evaluable to fail on it): ${open}`);
    return ExitCode.OK;
  }
  const parts = [
    missed.length > 0 ? `SLO missed by ${missed.map((m) => `${m.className} (in ${m.windows.join(', ')})`).join(', ')}` : '',
    notEvaluable.length > 0 ? `${failOpen ? '' : 'not gated: '}SLO not evaluable for ${open}` : '',
  ].filter(Boolean);
  const flags = failOpen ? '--fail-on-slo --fail-on-not-evaluable' : '--fail-on-slo';
  say(`exit ${ExitCode.SLO_MISSED} (${flags}): ${parts.join('; ')}`);
  return ExitCode.SLO_MISSED;
}
