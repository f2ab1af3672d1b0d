// The headroom check before a run's load (the I/O side of load.ts and rule.ts): project every
// agent's share against the limits it measured in its self-test, log what it costs, say how many
// agents the plan needs, and refuse the run (before any request) when the policy asks.
import { availableParallelism, loadavg } from 'node:os';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import { getOrCreate } from '../../shared/maps.js';
import type { Plan } from '../../shared/plan.js';
import type { GlobalSchedule } from '../../shared/schedule.js';
import type { SelfTestFigures } from '../../shared/self-test.js';
import { parseSelfTest } from '../../shared/self-test.js';
import type { ServerSpeed } from './load.js';
import { agentLoads } from './load.js';
import type { FleetAgent, HeadroomLimits, HeadroomVerdict } from './rule.js';
import { fleetSizeNeeded, judge, localCoreShare, peakCpuPerS, tightestSloMs } from './rule.js';

/**
 * What fails the check: `refuse` (the default) refuses a share over the ceiling itself (its loop
 * could never keep up) and warns at the stated limits; `strict` refuses at the stated limits too;
 * `warn` only warns (the override); `off` skips it.
 */
export type HeadroomPolicy = 'refuse' | 'strict' | 'warn' | 'off';

/** How the check is configured. */
export interface HeadroomOptions {
  policy: HeadroomPolicy;
  limits: HeadroomLimits;
  speed: ServerSpeed;
  /** The free cores local agents share, as stated (--free-cores); measured when absent. */
  freeCores?: number;
}

/** The check's outcome, as run.json keeps it. */
export interface HeadroomReport extends HeadroomVerdict {
  policy: HeadroomPolicy;
  limits: { max_elu: number; max_slo_share: number };
  server_speed_assumed: { ttft_ms: number; tokens_per_s: number };
  /** The smallest fleet of agents like the weakest one that passes, null when none does (why says why). */
  agents_needed: number | null;
  agents_needed_why: string;
  /**
   * The smallest fleet of agents like the weakest one, each on a machine of its own (not sharing
   * this machine's cores): what `coordinator plan` states without --local. For a remote fleet the
   * same as agents_needed.
   */
  agents_needed_own_machines: number | null;
  /** What the check did: passed, warned, or refused. */
  outcome: 'passed' | 'warned' | 'refused';
  /** A local fleet: its agent threads (packed agents without workers: one per process), the machine's free cores and the share of a core each thread gets. */
  local: { agent_threads: number; free_cores: number; core_share: number } | null;
}

/** This machine's free cores now: logical CPUs less the 1-minute load average (≥ 0). */
export function freeCoresNow(): number {
  return Math.max(0, Math.floor((availableParallelism() - loadavg()[0]!) * 10) / 10);
}

/** run.json definitions of the headroom block. */
export const HEADROOM_DEFINITIONS: Record<string, string> = {
  headroom:
    "The check made before any request: each agent's share of the schedule (per-second starts, chunks and finishes at the assumed server speed) priced with that agent's self-test costs, and judged against the stated limits.",
  'headroom.agents[].cpu_per_s': "Projected CPU-seconds per second of the agent's busiest second of the run.",
  'headroom.agents[].projected_elu':
    'cpu_per_s over the agent threads (--workers), and over the share of a core each gets in a local fleet: the event-loop utilisation its share projects to; 1 is the ceiling. Agents packed in one process without workers share its loop: it carries the sum of their cpu_per_s.',
  'headroom.agents[].implied_error_p99_ms':
    "The first-token stamp error p99 the agent's self-test error curve gives at projected_elu (linear between measured steps; at least the last step's beyond them, beyond_measured).",
  'headroom.agents[].stream_memory_bytes': "The agent's most open streams at once times its measured memory per stream.",
  'headroom.limits':
    'max_elu: the largest projected utilisation a share may reach; max_slo_share: the largest implied error p99 as a share of the tightest TTFT or E2E p95 bound.',
  'headroom.agents_needed':
    'The smallest number of agents like the fleet weakest (the one projecting the most CPU) whose shares all pass both limits; null when no number does (for a local fleet, none within the machine free cores).',
  'headroom.agents_needed_own_machines':
    'The same smallest number with each agent on a machine of its own (a whole core each, as `coordinator plan` projects without --local); for a remote fleet equal to agents_needed.',
  'headroom.local':
    "For agents spawned on the coordinator's machine: their threads (packed agents without workers: one per process), the machine's free cores (logical CPUs less the 1-minute load average) and the share of a core each thread gets (free cores / threads, at most 1; at least one core is counted), by which projected_elu is divided.",
  'headroom.outcome':
    'passed: every share within the limits; warned: some were not and the run went ahead (policy); refused: the run was not started.',
};

/** Checks the fleet before a run; returns the report (null when off) or throws LF_HEADROOM_REFUSED. */
export function checkHeadroom(
  plan: Plan,
  schedule: GlobalSchedule,
  fleet: readonly { id: string; selfTest: unknown; workers: number }[],
  opts: HeadroomOptions,
  log: (line: string) => void,
  /** Set for a local fleet: the machine's free cores, which its agents share, and its processes' agent ids when packed. */
  local?: LocalFleet,
): HeadroomReport | null {
  if (opts.policy === 'off') return null;
  const agents: FleetAgent[] = fleet.map((a) => ({ id: a.id, figures: parseSelfTest(a.selfTest), workers: a.workers }));
  const report = headroomReport(plan, schedule, agents, opts, local);
  for (const line of describeHeadroom(report)) log(line);
  if (report.outcome === 'refused')
    throw new LoadfleetError(
      ErrorCode.HEADROOM_REFUSED,
      `the plan's shares are beyond what these ${fleet.length} agents measured they can offer accurately (${report.agents.flatMap((a) => a.problems.map((p) => `${a.agent_id}: ${p}`))[0]}); ` +
        `it needs ${fleetSizeText(report)}; nothing was sent (--headroom warn runs it anyway)`,
      { exitCode: ExitCode.ABORTED },
    );
  return report;
}

/** A local fleet as the check sees it: the free cores, and (packed) the agent ids of each process. */
export interface LocalFleet {
  freeCores: number;
  groups?: readonly (readonly string[])[];
}

/** The report for a fleet (pure; `coordinator plan` uses it too). */
export function headroomReport(
  plan: Plan,
  schedule: GlobalSchedule,
  fleet: readonly FleetAgent[],
  opts: HeadroomOptions,
  local?: LocalFleet,
): HeadroomReport {
  // Packed agents without worker threads share their process's one loop (local-layout.ts).
  const loopOf = new Map<string, number>();
  for (const [p, ids] of (local?.groups ?? []).entries()) if (ids.length > 1) for (const id of ids) loopOf.set(id, p);
  const shared = (a: FleetAgent): number | undefined => (a.workers <= 1 ? loopOf.get(a.id) : undefined);
  // Local agents share the machine's free cores: each thread gets its share of one.
  const loops = new Set<number>();
  let threads = 0;
  for (const a of fleet) {
    const loop = shared(a);
    if (loop === undefined) threads += Math.max(1, a.workers);
    else if (!loops.has(loop)) {
      loops.add(loop);
      threads++;
    }
  }
  const coreShare = local ? localCoreShare(threads, local.freeCores) : 1;
  const agents = fleet.map((a) => {
    const loop = shared(a);
    return { ...a, coreShare, ...(loop !== undefined && { loop }) };
  });
  // The fleet-size search asks for the same sizes more than once; a big plan's loads are not cheap.
  const memo = new Map<number, ReturnType<typeof agentLoads>>();
  const loadsFor = (n: number) => getOrCreate(memo, n, () => agentLoads(plan, schedule, n, opts.speed));
  const loads = loadsFor(agents.length);
  const tightest = tightestSloMs(plan);
  const verdict = judge(loads, agents, tightest, opts.limits);
  const model = weakest(fleet, loads);
  const needed = model
    ? fleetSizeNeeded(loadsFor, model, tightest, opts.limits, agents.length, 10_000, local?.freeCores)
    : { agents: null, why: 'no agent sent self-test figures' };
  // Beyond a local machine's free cores more agents do not help there: say how many would, elsewhere.
  const elsewhere =
    model && local ? fleetSizeNeeded(loadsFor, { ...model, coreShare: 1 }, tightest, opts.limits, agents.length).agents : needed.agents;
  const failing = !verdict.ok;
  const refuse = (opts.policy === 'refuse' && verdict.over_ceiling) || (opts.policy === 'strict' && failing);
  return {
    ...verdict,
    policy: opts.policy,
    limits: { max_elu: opts.limits.maxElu, max_slo_share: opts.limits.maxSloShare },
    server_speed_assumed: { ttft_ms: opts.speed.ttftMs, tokens_per_s: opts.speed.tokensPerS },
    agents_needed: needed.agents,
    agents_needed_why: needed.why,
    agents_needed_own_machines: elsewhere,
    outcome: refuse ? 'refused' : failing ? 'warned' : 'passed',
    local: local ? { agent_threads: threads, free_cores: local.freeCores, core_share: Math.round(coreShare * 1000) / 1000 } : null,
  };
}

// The agent whose figures make its own share cost the most CPU per thread.
function weakest(agents: readonly FleetAgent[], loads: ReturnType<typeof agentLoads>): FleetAgent | null {
  let worst: FleetAgent | null = null;
  let most = -1;
  agents.forEach((a, i) => {
    if (!a.figures) return;
    const cpu = peakCpuPerS(loads[i]!, a.figures as SelfTestFigures) / Math.max(1, a.workers);
    if (cpu > most) {
      most = cpu;
      worst = a;
    }
  });
  return worst;
}

/**
 * How many agents the plan needs, in words: the one sentence the refusal, the run's log and
 * `coordinator plan` all give for the same plan and figures.
 */
export function fleetSizeText(
  r: Pick<HeadroomReport, 'agents_needed' | 'agents_needed_why' | 'agents_needed_own_machines' | 'local'>,
): string {
  if (r.agents_needed !== null) return `${r.agents_needed} agent(s) like these${r.local ? ' on this machine' : ''}`;
  if (r.agents_needed_own_machines !== null)
    return `${r.agents_needed_own_machines} agent(s) like these, each on a machine of its own (${r.agents_needed_why})`;
  return `more agents than any number tried: none suffices (${r.agents_needed_why})`;
}

/** The log lines of a report. */
export function describeHeadroom(r: HeadroomReport): string[] {
  const lines: string[] = [];
  if (r.local && r.local.core_share < 1)
    lines.push(
      `headroom: local fleet of ${r.local.agent_threads} agent thread(s) on ${r.local.free_cores} free core(s): each gets ${Math.round(r.local.core_share * 100)}% of a core, ` +
        `so its loop takes ${(1 / r.local.core_share).toFixed(1)}× as long for the same work (counted below), and at the start instant they all wake together and queue for the cores (start skew)`,
    );
  const busiest = [...r.agents].sort((a, b) => b.projected_elu - a.projected_elu)[0];
  if (busiest)
    lines.push(
      `headroom: busiest share ${busiest.agent_id} projects ${Math.round(busiest.projected_elu * 100)}% event-loop utilisation ` +
        `(stamp error p99 ${busiest.beyond_measured ? '≥ ' : '~'}${busiest.implied_error_p99_ms} ms) at the assumed ${r.server_speed_assumed.ttft_ms} ms TTFT and ${r.server_speed_assumed.tokens_per_s} tokens/s`,
    );
  for (const a of r.agents)
    for (const p of a.problems) lines.push(`headroom ${r.outcome === 'refused' ? 'refusal' : 'warning'}: ${a.agent_id}: ${p}`);
  // A large fleet names the first few (10,000 names made one 200 KB line in the synthetic-fleet bench).
  const named = r.unknown.length > 20 ? `${r.unknown.slice(0, 20).join(', ')} and ${r.unknown.length - 20} more` : r.unknown.join(', ');
  if (r.unknown.length > 0) lines.push(`headroom: no self-test figures from ${named} (not projected)`);
  if (r.outcome !== 'passed' || r.agents_needed !== r.agents.length + r.unknown.length)
    lines.push(
      r.agents_needed === null
        ? `headroom: this plan needs ${fleetSizeText(r)}`
        : `headroom: this plan needs ${fleetSizeText(r)} to stay within ${Math.round(r.limits.max_elu * 100)}% utilisation${r.tightest_slo_ms === null ? '' : ` and ${Math.round(r.limits.max_slo_share * 100)}% of the ${r.tightest_slo_ms} ms SLO bound`}`,
    );
  return lines;
}
