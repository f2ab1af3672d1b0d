// Pure: how a local fleet's agents are laid out in processes. N agent processes on a machine with
// fewer free cores all wake at the start instant and queue for the cores (the main job's 8 agents
// on 2 cores ended `degraded` for a 19 ms start skew). Packed, the same N agents run in as many
// processes as there are free cores, each process serving several agents: every agent keeps its own
// link, session, share, records and histograms (to the coordinator and in run.json it is still one
// agent), but the start instant wakes only as many event loops as there are cores.

/** What `--local-layout` asks for. */
export type LocalLayoutMode = 'auto' | 'process-per-agent' | 'packed';

export const LOCAL_LAYOUT_MODES: readonly LocalLayoutMode[] = ['auto', 'process-per-agent', 'packed'];

/** The layout a local fleet was started with (run.json `local_layout`). */
export interface LocalLayout {
  /** What was asked (--local-layout). */
  mode: LocalLayoutMode;
  /** What was chosen: one process per agent, or several agents per process. */
  chosen: 'process-per-agent' | 'packed';
  /** The free cores the choice was made for (--free-cores, else measured when the fleet was spawned). */
  free_cores: number;
  agents: number;
  /** Worker threads per agent (agent --workers; auto counts as 1). */
  workers_per_agent: number;
  /** Agent processes started, and the event loops (process main threads and worker threads) they run. */
  processes: number;
  agent_threads: number;
  /** The agent ids of each process, in order. */
  groups: string[][];
  why: string;
}

/** run.json definitions of `local_layout`. */
export const LOCAL_LAYOUT_DEFINITIONS: Record<string, string> = {
  local_layout:
    "How the coordinator started its local agents (null: the agents were not spawned by it): one process per agent, or packed — several agents in one process, each still its own agent (own link, session, share, records, histograms and status), sharing that process's event loop, CPU and clock domain.",
  'local_layout.mode':
    '--local-layout as asked: auto (packed when more agents than free cores, and the agents run without --workers), process-per-agent or packed.',
  'local_layout.free_cores':
    'The free cores the layout was chosen for: --free-cores, else logical CPUs less the 1-minute load average when the fleet was spawned (at least one counted).',
  'local_layout.processes': 'Agent processes started: packed, one per free core (at least one), never more than the agents.',
  'local_layout.agent_threads':
    'Event loops that run the agents’ load: one per process without --workers (its agents share its main thread), else every agent’s worker threads.',
  'local_layout.groups': 'The agent ids each process serves; shared_processes says the same from the agents’ own hellos.',
  'agents[].process_agents':
    'How many of the run’s agents the agent’s process served (same host, pid and process epoch in their hellos), itself included: above 1, its cpu_ms, event_loop_utilization and event_loop_delay_p99_ms are that one process’s and its loop’s, shared.',
  shared_processes:
    'Agent processes that served more than one of the run’s agents (a packed local layout, or agent --id given several times): host, pid and the agent ids; empty when every agent had its process to itself.',
};

/** Worker threads per local agent as `--agent-arg=--workers=N` asks (auto, absent or unreadable: 1). */
export function workersOfAgentArgs(args: readonly string[]): number {
  let workers = 1;
  args.forEach((a, i) => {
    const value = a.startsWith('--workers=') ? a.slice('--workers='.length) : a === '--workers' ? args[i + 1] : undefined;
    if (value === undefined) return;
    const n = Number(value);
    workers = Number.isInteger(n) && n >= 1 ? n : 1;
  });
  return workers;
}

/**
 * The layout of `agents` local agents (ids agent-1…) with `workers` threads each on `freeCores`
 * free cores. Packed: one process per free core (at least one, at most the agents), the agents
 * dealt out in order so that process sizes differ by at most one. `auto` packs only agents without
 * worker threads: an agent with --workers N keeps its N threads wherever it runs, so packing its
 * main thread would not make fewer loops wake at the start.
 */
export function chooseLocalLayout(agents: number, freeCores: number, workers: number, mode: LocalLayoutMode): LocalLayout {
  const ids = Array.from({ length: agents }, (_, i) => `agent-${i + 1}`);
  const cores = Math.max(1, Math.floor(freeCores));
  const pack = mode === 'packed' || (mode === 'auto' && workers <= 1 && agents > cores);
  const processes = pack ? Math.min(agents, cores) : agents;
  const groups: string[][] = [];
  for (let p = 0, next = 0; p < processes; p++) {
    const size = Math.floor(agents / processes) + (p < agents % processes ? 1 : 0);
    groups.push(ids.slice(next, next + size));
    next += size;
  }
  const chosen = processes < agents ? 'packed' : 'process-per-agent';
  const threads = workers <= 1 ? processes : agents * workers;
  const on = freeCores < 1 ? `${freeCores} free cores (one counted)` : `${cores} free core(s)`;
  const why =
    chosen === 'packed'
      ? `${agents} agents on ${on}: ${processes} process(es) serve them, so the start instant wakes ${threads} event loop(s), not ${agents * workers}`
      : mode === 'process-per-agent'
        ? 'one process per agent, as asked'
        : workers > 1 && agents * workers > cores
          ? `agents with --workers ${workers} keep their threads in any layout: one process per agent`
          : `${agents * workers} agent thread(s) fit ${on}: one process per agent`;
  return { mode, chosen, free_cores: freeCores, agents, workers_per_agent: workers, processes, agent_threads: threads, groups, why };
}
