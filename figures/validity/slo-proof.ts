// Pure: the SLO-proof gate (domain.md §5). It says whether the run's SLO evaluation can be
// trusted — open-loop arrivals, no ceiling that truncated latencies, every declared SLO
// evaluated, flow control as expected — not whether the SLOs were met: attainment is evidence.
import { declaredBounds } from '../../shared/slo-bounds.js';
import type { Check, ClassEvidence, Gate, ValidityInput } from './types.js';
import { decide, gate, notApplicable, notEvaluated } from './types.js';

/** One sentence per check. */
export const SLO_PROOF_DEFINITIONS: Record<string, string> = {
  open_loop_arrivals:
    'every class that declares an SLO offers open-loop arrivals (a rate model), so its latencies are not shaped by its own responses (coordinated omission)',
  no_safety_ceiling_hit:
    "the run was not aborted, no agent was lost, no request ended at the client's timeout_s ceiling (status timeout), and no agent was client-limited (schedule lag or event-loop delay p99 above 50 ms)",
  declared_slos_evaluated:
    "every class's declared SLO was evaluated over its requests: per window the verdict's p95 of each bounded metric (failed requests ranked +∞, the figure and met of slo_verdict) against its bound, the success rate (completed / attempted; 429, 5xx and timeouts count as misses) against success_rate_min, and slo_attainment (the share of attempted requests that succeeded and met every bound); fails when a class declaring an SLO sent no request; not evaluated when a class's slo_verdict is not_evaluable (the reason says which bound and why)",
  flow_control_as_expected:
    'present only when the run declares an expectation: the server block flow_control_materially_engaged (window all) equals it',
};

/** SLO classes offer open-loop arrivals. */
export function openLoopArrivals(input: ValidityInput): Check {
  const slo = input.classes.filter((c) => c.slo !== null);
  const evidence = { classes: Object.fromEntries(slo.map((c) => [c.name, { open_loop: c.openLoop }])) };
  if (slo.length === 0) return notApplicable('open_loop_arrivals', 'no class declares an SLO', evidence);
  return decide(
    'open_loop_arrivals',
    slo.filter((c) => !c.openLoop).map((c) => `${c.name} declares an SLO but runs a closed loop`),
    evidence,
  );
}

/** Nothing cut the run or its latencies short. */
export function noSafetyCeilingHit(input: ValidityInput): Check {
  const timeouts = input.classes.reduce((n, c) => n + (c.statusCounts.timeout ?? 0), 0);
  const problems: string[] = [];
  if (input.abortReason) problems.push(`aborted: ${input.abortReason}`);
  if (input.lostAgents.length > 0) problems.push(`lost agent(s): ${input.lostAgents.join(', ')}`);
  if (timeouts > 0) problems.push(`${timeouts} request(s) hit the client timeout`);
  if (input.clientLimited) problems.push(`client limited: ${input.clientReasons.join('; ')}`);
  return decide('no_safety_ceiling_hit', problems, {
    aborted: input.abortReason !== null,
    lost_agents: input.lostAgents,
    timeouts,
    client_limited: input.clientLimited,
  });
}

/** Every declared SLO evaluated, with per-class attainment as evidence. */
export function declaredSlosEvaluated(input: ValidityInput): Check {
  const name = 'declared_slos_evaluated';
  const slo = input.classes.filter((c) => c.slo !== null);
  const classes = Object.fromEntries(slo.map((c) => [c.name, sloEvidence(c)]));
  if (slo.length === 0) return notApplicable(name, 'no class declares an SLO');
  const problems = slo.filter((c) => (c.windows.all?.requests ?? 0) === 0).map((c) => `${c.name} declares an SLO but sent no request`);
  // A verdict that could not be judged is an SLO not evaluated: the check never passes on it.
  const open = slo
    .filter((c) => c.sloVerdict?.verdict === 'not_evaluable' && (c.windows.all?.requests ?? 0) > 0)
    .map((c) => {
      const v = c.sloVerdict!;
      const w = v.not_evaluable_in[0] ?? 'all';
      return `${c.name}: SLO not evaluable in ${v.not_evaluable_in.join(', ')} (${v.windows[w]?.reason ?? 'nothing to judge'})`;
    });
  if (problems.length === 0 && open.length > 0) return notEvaluated(name, open.join('; '), { classes });
  return decide(name, problems, { classes });
}

// Per window: each declared bound against the window's p95, the success rate, and slo_attainment.
function sloEvidence(c: ClassEvidence): Record<string, unknown> {
  const slo = c.slo!;
  const windows: Record<string, unknown> = {};
  for (const [w, m] of Object.entries(c.windows)) {
    const row: Record<string, unknown> = { requests: m.requests, slo_attainment: m.slo_attainment };
    // The verdict's own figures (failures ranked +∞) where there is a verdict: one answer to whether a bound was met.
    const verdict = c.sloVerdict?.windows[w];
    if (verdict) row.verdict = verdict.verdict;
    // Each bound of the SLO table the class declares: its figure (ttft_p95_ms) and whether it was met (ttft_p95_met).
    for (const { row: b, bound: limit } of declaredBounds(slo)) {
      const judged = verdict?.criteria.find((x) => x.criterion === b.key);
      const named = (m as unknown as Record<string, unknown>)[b.key];
      const figure = m.bounds?.[b.key] ?? (typeof named === 'number' ? named : null);
      row[b.key] = judged ? judged.figure : figure;
      row[b.key.replace(/_ms$/, '_met')] = judged ? judged.met : figure === null ? null : figure <= limit;
    }
    const rate = m.requests > 0 ? Math.round((m.completed / m.requests) * 1e6) / 1e6 : null;
    row.success_rate = rate;
    if (slo.success_rate_min !== undefined) row.success_rate_met = rate === null ? null : rate >= slo.success_rate_min;
    windows[w] = row;
  }
  return { slo, slo_attainment: c.windows.all?.slo_attainment ?? null, windows };
}

/** Flow control engaged (or not) as the run declared; null when no expectation was declared. */
export function flowControlAsExpected(input: ValidityInput): Check | null {
  if (input.expectFlowControlEngaged === undefined) return null;
  const engaged = input.server.flow_control_materially_engaged ?? null;
  const evidence = { expected: input.expectFlowControlEngaged, flow_control_materially_engaged: engaged };
  if (engaged === null)
    return notEvaluated('flow_control_as_expected', 'no scrape source exposes the gateway flow-control metrics', evidence);
  return decide(
    'flow_control_as_expected',
    engaged === input.expectFlowControlEngaged ? [] : [`flow control ${engaged ? 'engaged' : 'did not engage'}, expected the opposite`],
    evidence,
  );
}

/** The SLO-proof gate. */
export function sloProof(input: ValidityInput): Gate {
  const checks = [openLoopArrivals(input), noSafetyCeilingHit(input), declaredSlosEvaluated(input)];
  const flow = flowControlAsExpected(input);
  if (flow) checks.push(flow);
  const declared = `class(es) ${input.classes
    .filter((c) => c.slo !== null)
    .map((c) => c.name)
    .join(', ')} declare an SLO`;
  return gate(checks, SLO_PROOF_DEFINITIONS, {
    open_loop_arrivals: declared,
    no_safety_ceiling_hit: 'every run can be cut short',
    declared_slos_evaluated: declared,
    flow_control_as_expected: 'the run declares whether flow control should engage',
  });
}
