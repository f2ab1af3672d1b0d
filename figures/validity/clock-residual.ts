// Pure: the clock_residual check of the data-quality gate. A steered agent is judged by its
// held-out probes over the whole run (coordinator/clock/held-out.ts), each on its own round trip:
// it fails when one of them proves the run timeline was off by more than the tolerance, and it
// cannot pass when too few of them were precise enough to tell. An agent of a declared common
// clock domain is judged by its fitted distance from the domain's reference.
import type { Check, ClockResidualEntry, ValidityInput } from './types.js';
import { decide, notEvaluated } from './types.js';

/** The check's definition (run.json data_quality.definitions.clock_residual). */
export const CLOCK_RESIDUAL_DEFINITION =
  "present only when the coordinator steered agents' drifting clocks during the run (basis steered), or checked agents of a declared common clock domain that it does not steer against the domain's reference, the median agent (basis declared-domain: a domain other than the coordinator's own host, two or more agents). A steered agent is measured over the whole run, from its first request on, by its held-out probes (every fourth in-run probe, a burst of four with the shortest round trip kept, never used to fit or steer): each measures |run timeline − coordinator timeline| to within half its own round trip; it fails when any of them proves a distance beyond --clock-tolerance-ms (|residual| − half its round trip > tolerance: run.json agents[].clock_residual_proven_max_ns), and it is not evaluated when it has no held-out probe or fewer than half of them had half a round trip within the tolerance (too stalled to tell). A declared-domain agent fails when its largest distance from the domain's reference (agents[].clock_residual_max_ns) less its offset uncertainty exceeds the tolerance, so a declared domain that stops holding during the run fails here instead of being trusted";

/** Why a steered agent cannot be judged, or null when it can. */
function unjudged(a: ClockResidualEntry): string | null {
  const h = a.heldOut;
  if (!h || h.probes === 0) return `${a.agentId}: no held-out probe measured its run timeline`;
  if (h.informative * 2 < h.probes)
    return `${a.agentId}: only ${h.informative} of ${h.probes} held-out probes were precise enough to judge the tolerance (half their round trip within it)`;
  return null;
}

const ms = (ns: number | null): number | null => (ns === null ? null : ns / 1e6);

/** Every steered or checked agent's clock stayed within --clock-tolerance-ms of the run's timeline. */
export function clockResidual(input: ValidityInput): Check {
  const tolerance = input.clockToleranceNs ?? 0;
  const agents = input.clockResiduals ?? [];
  const steered = (a: ClockResidualEntry): boolean => (a.basis ?? 'steered') === 'steered';
  const evidence = {
    tolerance_ms: tolerance / 1e6,
    agents: Object.fromEntries(
      agents.map((a) => [
        a.agentId,
        steered(a)
          ? {
              basis: 'steered',
              heldout_probes: a.heldOut?.probes ?? 0,
              informative_probes: a.heldOut?.informative ?? 0,
              residual_p50_ms: ms(a.heldOut?.p50_ns ?? null),
              residual_p99_ms: ms(a.heldOut?.p99_ns ?? null),
              residual_max_ms: ms(a.heldOut?.max_ns ?? null),
              proven_max_ms: ms(a.heldOut?.proven_max_ns ?? null),
              proven_max_at_s: a.heldOut?.proven_max_at_s ?? null,
            }
          : { basis: 'declared-domain', residual_max_ms: ms(a.residualMaxNs), uncertainty_ms: a.uncertaintyNs / 1e6 },
      ]),
    ),
  };
  const problems: string[] = [];
  const missing: string[] = [];
  for (const a of agents) {
    if (steered(a)) {
      const why = unjudged(a);
      const h = a.heldOut;
      if (h && h.proven_max_ns !== null && h.proven_max_ns > tolerance)
        problems.push(
          `${a.agentId}: a held-out probe at t=${h.proven_max_at_s} s measured its run timeline at least ${(h.proven_max_ns / 1e6).toFixed(3)} ms off (> ${(tolerance / 1e6).toFixed(3)} ms)`,
        );
      else if (why) missing.push(why);
    } else if (a.residualMaxNs === null) missing.push(`${a.agentId}: not checked against its declared domain`);
    else if (a.residualMaxNs - a.uncertaintyNs > tolerance)
      problems.push(
        `${a.agentId}: residual ${(a.residualMaxNs / 1e6).toFixed(3)} ms (± ${(a.uncertaintyNs / 1e6).toFixed(3)} ms) > ${(tolerance / 1e6).toFixed(3)} ms from its declared clock domain`,
      );
  }
  if (problems.length > 0) return decide('clock_residual', problems, evidence);
  if (missing.length > 0) return notEvaluated('clock_residual', missing.join('; '), evidence);
  return decide('clock_residual', [], evidence);
}
