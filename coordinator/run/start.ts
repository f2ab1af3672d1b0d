// A run's conversation before its load, agent by agent through the channels: welcome, clock probes,
// the plan, the start instant. A step that fails because an agent left ends the attempt with
// LF_AGENT_LOST marked before-start, so the fleet can run it again with the agents that are there.
import { hostClockDomain } from '../../shared/clock.js';
import { SILENCE_DETECTION_BOUND_MS } from '../../shared/delivery.js';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import type { AgentProgress } from '../artifacts/failed-run-json.js';
import { chooseStartNs } from '../barrier.js';
import type { ClockDecision } from '../clock/policy.js';
import { decideAlignment } from '../clock/policy.js';
import { ClockSteering } from '../clock/steering.js';
import { reachedState } from '../phases.js';
import { shareFor } from '../plan.js';
import { probeAll } from '../probe.js';
import type { RunState } from './context.js';
import { BEFORE_START, PREPARE_TIMEOUT_MS } from './options.js';
import { reachability } from './reachability.js';

/** Welcome, probes, alignment and preparation; returns the clock decision once every agent is prepared. */
export async function prepareAgents(run: RunState): Promise<ClockDecision> {
  const { opts } = run;
  // Agents on this very machine (same boot, so the same monotonic clock) take the coordinator's
  // anchor: one hrtime-to-wall mapping for all of them, so a wall clock being slewed between
  // their start-ups cannot make them disagree by milliseconds.
  const anchor = { wall_ns: run.clock.anchor.wallNs, hr: run.clock.anchor.hr, uncertainty_ns: run.clock.anchor.uncertaintyNs };
  for (const ch of run.channels)
    ch.send({
      type: 'welcome',
      agent_index: ch.index,
      agent_count: run.channels.length,
      run_id: run.runId,
      host_domain: hostClockDomain(),
      anchor,
      grace_ms: opts.agentGraceMs,
    });
  const offsets = await beforeStart(run, () => probeAll(run.channels, run.clock));
  const decision = decideAlignment(
    run.channels.map((ch, i) => ({ agentId: ch.id, domain: ch.conn.hello.clock_domain_id, offset: offsets[i]! })),
    hostClockDomain(),
    opts.clockToleranceNs,
    opts.onClockMismatch,
  );
  run.decision = decision;
  if (decision.note) run.runEvents.push(decision.note);
  const steering = new ClockSteering(
    run.clock,
    decision,
    () => run.startNs,
    () => run.elapsedS(),
  );
  run.steering = steering;
  // Steered agents are probed while they prepare, so their drift is fitted before the start.
  const preparing = Promise.all(
    run.channels.map((ch) =>
      ch.prepare({ type: 'plan', run_id: run.runId, plan: run.plan, share: shareFor(ch.index, run.channels.length) }, PREPARE_TIMEOUT_MS),
    ),
  );
  const preStart = steering.probeBeforeStart(run.channels, preparing);
  await beforeStart(run, () => preparing);
  const preStartProbes = await preStart;
  for (const ch of run.channels) ch.runProbes = preStartProbes[ch.index]!;
  checkReachable(run);
  run.states.push(...run.channels);
  return decision;
}

/** Picks the start instant and tells each agent's channel the instant in the agent's own clock. */
export function chooseStart(run: RunState, decision: ClockDecision): void {
  const explicit = decision.alignment === 'explicit-common-clock-domain';
  const worstRtt = Math.max(...run.states.map((s) => s.offset.rtt_ns));
  run.startNs = chooseStartNs(run.clock.nowNs(), worstRtt, Math.max(...run.states.map((s) => s.prepMs)));
  run.steering!.placeStart(run.states, run.startNs);
  // Each agent hears the start instant in its own clock: the common domain's, or its measured one.
  for (const s of run.states) s.startLocalNs = run.startNs + BigInt(explicit ? decision.domainOffsetNs : s.startOffsetNs!);
}

/**
 * The agents' warm-ups (reachability.ts): each said in the log; beyond the loss budget the agents
 * are told to drop the run and LF_TARGET_UNREACHABLE ends it before any load, each agent's error in
 * its details and in failed-run.json; within it the run goes on, and run.json says who could not.
 */
function checkReachable(run: RunState): void {
  const r = reachability(
    run.channels.map((ch) => ({ agentId: ch.id, host: ch.conn.hello.host, warmUp: ch.warmUp })),
    run.lossBudget,
  );
  for (const line of r.lines) run.opts.log(line);
  if (r.refusal) {
    for (const u of r.unreachable) run.channels.find((ch) => ch.id === u.agentId)!.failure = `${ErrorCode.TARGET_UNREACHABLE}: ${u.error}`;
    for (const a of run.agents) a.send({ type: 'abort', reason: r.refusal });
    throw new LoadfleetError(ErrorCode.TARGET_UNREACHABLE, r.refusal, {
      exitCode: ExitCode.ABORTED,
      details: r.unreachable.map((u) => `${u.agentId} (${u.host}): ${u.error}`),
    });
  }
  for (const u of r.unreachable) run.runEvents.push(`agent ${u.agentId} could not reach the target before the load: ${u.error}`);
}

/**
 * Runs a step before any load: if it fails because an agent's link closed, the others are told
 * to drop the run and LF_AGENT_LOST is thrown with `beforeStart`, so the fleet can run it again
 * with the agents that are there (nothing was sent, nothing is lost).
 */
async function beforeStart<T>(run: RunState, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    // A link that went silent (a probe or the preparation timed out) is dropped by the heartbeat
    // within its bound: wait that long to tell a silent link from an agent that failed.
    const reported = err instanceof LoadfleetError && err.code === ErrorCode.AGENT_FAILED;
    const deadline = reported ? 0 : Date.now() + SILENCE_DETECTION_BOUND_MS;
    while (!run.agents.some((a) => a.closed) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const gone = run.agents.filter((a) => a.closed).map((a) => a.hello.agent_id);
    if (gone.length === 0) throw err;
    const why = `agent ${gone.join(', ')} left before the run started`;
    for (const a of run.agents) a.send({ type: 'abort', reason: why });
    throw new LoadfleetError(ErrorCode.AGENT_LOST, why, { exitCode: ExitCode.ABORTED, cause: BEFORE_START });
  }
}

/** Each agent's last phase before the start, in failed-run.json's words (joined, probed, preparing, prepared, failed). */
export function progress(run: RunState): AgentProgress[] {
  return run.channels.map((ch) => ({ agent_id: ch.id, host: ch.conn.hello.host, state: reachedState(ch.phase), detail: ch.failure }));
}
