// The wrapper's exit, from what the run wrote and how its coordinator ended, so a run that lost
// agents or aborted is never reported as a success: the coordinator's own exit code when it is not
// 0 (3 aborted, 4 an SLO missed with --fail-on-slo, 2 invalid input), 6 for a run that completed
// degraded, 1 for a run the cluster ended (or whose results could not be copied). Pure, over the
// run.json files fetched and the coordinator pod's container status.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** shared/errors.ts ExitCode, which this plain module cannot import (the test holds them equal). */
export const EXIT = { OK: 0, FAILURE: 1, INVALID_INPUT: 2, ABORTED: 3, SLO_MISSED: 4, DEGRADED: 6 };

/** Every run.json under a fetched run directory: { path, status, reason }. */
export function readRuns(dir) {
  const out = [];
  const walk = (d) => {
    let entries = [];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === 'run.json')
        try {
          const run = JSON.parse(readFileSync(p, 'utf8'));
          out.push({ path: relative(dir, p), status: run.status, reason: run.status_reason ?? null });
        } catch {
          out.push({ path: relative(dir, p), status: 'unreadable', reason: null });
        }
    }
  };
  walk(dir);
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

/** The exit code of the newest coordinator pod's container, or undefined while none ended. */
export function coordinatorExit(pods) {
  const ended = pods
    .filter((p) => p.metadata?.labels?.['app.kubernetes.io/component'] === 'coordinator')
    .map((p) => p.status?.containerStatuses?.[0]?.state?.terminated)
    .filter(Boolean);
  return ended.at(-1)?.exitCode;
}

/**
 * { code, lines }: `clusterFailure` is why the wrapper ended the run (undefined when the coordinator
 * Job ended by itself, completed or failed); `coordinatorFailed` whether its Job failed; `exit` the
 * coordinator's exit code; `runs` the run.json files fetched.
 */
export function decideExit({ clusterFailure, coordinatorFailed, exit, runs, fetched }) {
  const lines = runs.map((r) => `${r.path}: ${r.status}${r.reason ? ` (${r.reason})` : ''}`);
  // The wrapper ended the run (the cluster refused or lost it): whatever the stopped coordinator said.
  if (clusterFailure) return { code: EXIT.FAILURE, lines };
  if (exit !== undefined && exit !== 0) return { code: exit, lines: [...lines, `the coordinator exited ${exit}${meaning(exit)}`] };
  // Its Job failed without an exit code to show (its deadline, its pod gone).
  if (coordinatorFailed) return { code: EXIT.FAILURE, lines };
  if (runs.some((r) => r.status === 'aborted' || r.status === 'failed')) return { code: EXIT.ABORTED, lines };
  if (runs.some((r) => r.status === 'degraded')) return { code: EXIT.DEGRADED, lines: [...lines, 'exit 6: the run is degraded'] };
  if (!fetched) return { code: EXIT.FAILURE, lines };
  return { code: EXIT.OK, lines };
}

function meaning(code) {
  return { 1: ' (a failure)', 2: ' (invalid input)', 3: ' (the run aborted)', 4: ' (an SLO missed, --fail-on-slo)' }[code] ?? '';
}
