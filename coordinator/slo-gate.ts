// The exit-code gate of --fail-on-slo: reads the verdicts a written run.json holds, so the gate
// judges exactly what the artifact says (and works the same on a run directory written earlier).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ExitCode } from '../shared/errors.js';

/** The classes of a run directory whose slo_verdict is missed, with the windows they missed in. */
export async function missedSlos(runDir: string): Promise<{ className: string; windows: string[] }[]> {
  const run = JSON.parse(await readFile(join(runDir, 'run.json'), 'utf8')) as {
    classes?: Record<string, { slo_verdict?: { verdict: string; missed_in: string[] } }>;
  };
  return Object.entries(run.classes ?? {})
    .filter(([, c]) => c.slo_verdict?.verdict === 'missed')
    .map(([className, c]) => ({ className, windows: c.slo_verdict!.missed_in }));
}

/**
 * The exit code once a run is written: an abort keeps its own code; otherwise, with --fail-on-slo,
 * any missed SLO gives SLO_MISSED, and a line saying why (for the CI log).
 */
export async function sloExitCode(runDir: string, status: string, failOnSlo: boolean, say: (line: string) => void): Promise<number> {
  if (status === 'aborted') return ExitCode.ABORTED;
  if (!failOnSlo) return ExitCode.OK;
  const missed = await missedSlos(runDir);
  if (missed.length === 0) return ExitCode.OK;
  say(
    `exit ${ExitCode.SLO_MISSED} (--fail-on-slo): SLO missed by ${missed.map((m) => `${m.className} (in ${m.windows.join(', ')})`).join(', ')}`,
  );
  return ExitCode.SLO_MISSED;
}
