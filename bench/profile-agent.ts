// Profiles the agent on the agent_hot_path load (a closed loop against the paced server) and says
// where its CPU went: user vs system time and main thread vs the others from /proc, and from a
// `--cpu-prof` of the agent process the main thread's JavaScript by file group (undici, agent,
// shared, Node internals), garbage collection, and the top functions by self time.
//
// Usage: node dist/bench/profile-agent.js [--dist <dist dir>]… [--bare] [--rounds 1] [--duration 12]
//   Each --dist is a compiled tree whose coordinator and agent are profiled (default: this one);
//   with several, rounds alternate between them so they meet the same machine (before/after).
//   --bare adds bench/bare-undici-client.js on the same load to each round, profiled the same way.
//   --rate N profiles schedule_fidelity's open loop at N requests/s instead (4-token streams).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ClientLoad } from './client-args.js';
import { clientArgv } from './client-args.js';
import { startPacedServer } from './paced-server.js';
import { closedLoopPlan, constantRatePlan } from './plans.js';
import { childPids, machineCpuMs } from './proc.js';
import { round3 } from './sampler.js';
import { distFile, sleep, startChild } from './spawn.js';

const GAP_MS = 20;

interface CpuSplit {
  userMs: number;
  systemMs: number;
  mainThreadMs: number;
}

// utime and stime of a process or one of its threads, in ms (USER_HZ is 100 on Linux).
function cpuSplit(pid: number): CpuSplit | null {
  const read = (path: string): [number, number] | null => {
    try {
      const text = readFileSync(path, 'utf8');
      const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
      return [Number(f[11]) * 10, Number(f[12]) * 10];
    } catch {
      return null;
    }
  };
  const all = read(`/proc/${pid}/stat`);
  const main = read(`/proc/${pid}/task/${pid}/stat`);
  return all && main ? { userMs: all[0], systemMs: all[1], mainThreadMs: main[0] + main[1] } : null;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

// Where a frame's code lives, coarsely: enough to tell our work from undici's and V8's.
function group(url: string, name: string): string {
  if (name === '(garbage collector)' || name === '(idle)' || name === '(program)') return name;
  if (url.includes('node_modules/undici')) return 'undici';
  if (url.includes('node_modules/')) return 'other packages';
  if (url.includes('/dist/agent/')) return 'agent';
  if (url.includes('/dist/shared/')) return 'shared';
  if (url.startsWith('node:')) return 'node internals';
  return name === '(root)' ? '(root)' : 'native/other';
}

/** Self time (ms) per group and the top functions, from a .cpuprofile. */
function summarise(profile: CpuProfile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  for (const [i, id] of profile.samples.entries()) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const groups: Record<string, number> = {};
  const fns = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const g = group(url, functionName);
    groups[g] = (groups[g] ?? 0) + us / 1000;
    const key = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
    fns.set(key, (fns.get(key) ?? 0) + us / 1000);
    // Inclusive time of our own functions (each counted once per stack): what a call costs with
    // everything below it, e.g. a record's encoding inside the spool write.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      if (!f.url.includes('/dist/')) continue;
      const k = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + us / 1000);
    }
  }
  const top = [...fns]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 60)
    .map(([fn, ms]) => ({ fn, ms: Math.round(ms) }));
  const ours = [...inclusive]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([fn, ms]) => ({ fn, ms: Math.round(ms) }));
  return {
    groups: Object.fromEntries(Object.entries(groups).map(([g, ms]) => [g, Math.round(ms)])),
    top,
    ours_inclusive: ours,
    long_blocks: longBlocks(profile, byId, parent),
  };
}

// Runs of JavaScript without an idle sample, 2 ms or longer: what keeps the loop from reading
// sockets (and sending on time), each with the functions most often on its stacks.
function longBlocks(profile: CpuProfile, byId: Map<number, ProfileNode>, parent: Map<number, number>) {
  const blocks: { ms: number; stacks: number[] }[] = [];
  let run: { us: number; stacks: number[] } = { us: 0, stacks: [] };
  for (const [i, id] of profile.samples.entries()) {
    if (byId.get(id)!.callFrame.functionName === '(idle)') {
      if (run.us >= 2000) blocks.push({ ms: run.us / 1000, stacks: run.stacks });
      run = { us: 0, stacks: [] };
    } else {
      run.us += profile.timeDeltas[i] ?? 0;
      run.stacks.push(id);
    }
  }
  const frames = (stacks: number[]): string[] => {
    const counts = new Map<string, number>();
    for (const id of stacks) {
      const seen = new Set<string>();
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const f = byId.get(at)!.callFrame;
        const k = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
        if (f.functionName === '(root)' || seen.has(k)) continue;
        seen.add(k);
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
    }
    return [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([k, n]) => `${n}× ${k}`);
  };
  return {
    count: blocks.length,
    total_ms: Math.round(blocks.reduce((t, b) => t + b.ms, 0)),
    longest: blocks
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 5)
      .map((b) => ({ ms: Math.round(b.ms * 10) / 10, frames: frames(b.stacks) })),
  };
}

/** The closed loop of agent_hot_path, or with `ratePerS` the open loop of schedule_fidelity. */
type Load = ClientLoad & { ratePerS?: number };

// The agent runs under a coordinator (the pid to watch is its child); the bare client is the pid itself.
async function profileOnce(what: string, dist: string, load: Load) {
  const root = mkdtempSync(join(tmpdir(), 'loadfleet-prof-'));
  const profDir = join(root, 'prof');
  mkdirSync(profDir);
  const env = { NODE_OPTIONS: `--import=${distFile('bench/cpu-profile-preload.js')}`, LOADFLEET_CPU_PROF_DIR: profDir };
  let argv: string[];
  if (what === 'agent') {
    const plan =
      load.ratePerS !== undefined
        ? constantRatePlan({ name: 'bench-profile', drainS: 10, ...load, ratePerS: load.ratePerS })
        : closedLoopPlan({ name: 'bench-profile', drainS: 30, ...load });
    writeFileSync(join(root, 'plan.json'), JSON.stringify(plan));
    argv = [
      join(dist, 'coordinator/main.js'),
      'start',
      '--agents',
      '1',
      '--plan',
      join(root, 'plan.json'),
      '--out',
      join(root, 'out'),
      '--quiet',
      // Profiled past its limits on purpose; no self-test in the profile.
      '--headroom',
      'warn',
      '--agent-arg=--self-test=skip',
    ];
  } else argv = [distFile('bench/bare-undici-client.js'), ...clientArgv(load)];
  const machine0 = machineCpuMs();
  const t0 = performance.now();
  const child = startChild(process.execPath, argv, env);
  let pid: number | undefined = what === 'agent' ? undefined : child.pid;
  let last: CpuSplit | null = null;
  let running = true;
  void child.exited.then(() => (running = false));
  while (running) {
    pid ??= childPids(child.pid, 'agent/main.js')[0];
    if (pid !== undefined) last = cpuSplit(pid) ?? last;
    await sleep(100);
  }
  const wallMs = performance.now() - t0;
  const done = await child.exited;
  if (done.code !== 0) process.stderr.write(`[profile] ${what} exited ${done.code}: ${done.stderr.slice(-2000)}\n`);
  const machine1 = machineCpuMs();
  const file = (existsSync(profDir) ? readdirSync(profDir) : []).find((f) => pid !== undefined && f.includes(`.${pid}.`));
  const prof = file ? summarise(JSON.parse(readFileSync(join(profDir, file), 'utf8')) as CpuProfile) : null;
  rmSync(root, { recursive: true, force: true });
  return {
    client: what === 'agent' ? `agent (${dist})` : 'bare undici',
    cpu_ms: last && { user: last.userMs, system: last.systemMs, main_thread: last.mainThreadMs },
    machine_busy_cores: round3((machine1.busyMs - machine0.busyMs) / wallMs),
    profile_ms: prof,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dist: { type: 'string', multiple: true, default: [] },
      bare: { type: 'boolean', default: false },
      rate: { type: 'string' },
      rounds: { type: 'string', default: '1' },
      duration: { type: 'string', default: '12' },
      concurrency: { type: 'string', default: '400' },
      tokens: { type: 'string', default: '128' },
    },
  });
  const dists = values.dist.length > 0 ? values.dist.map((d) => resolve(d)) : [distFile('')];
  const server = await startPacedServer(GAP_MS, GAP_MS);
  const load: Load =
    values.rate === undefined
      ? {
          baseUrl: server.baseUrl,
          concurrency: Number(values.concurrency),
          tokens: Number(values.tokens),
          durationS: Number(values.duration),
          gapMs: GAP_MS,
          firstMs: GAP_MS,
        }
      : // schedule_fidelity's streams: 4 tokens, 5 ms apart.
        {
          baseUrl: server.baseUrl,
          concurrency: 0,
          tokens: 4,
          durationS: Number(values.duration),
          gapMs: 5,
          firstMs: 5,
          ratePerS: Number(values.rate),
        };
  const clients: [string, string][] = [
    ...dists.map((d): [string, string] => ['agent', d]),
    ...(values.bare ? [['bare', ''] as [string, string]] : []),
  ];
  const out = [];
  try {
    for (let r = 0; r < Number(values.rounds); r++) {
      for (const [what, dist] of clients) {
        const s0 = await server.stats();
        const one = await profileOnce(what, dist, load);
        const chunks = (await server.stats()).tokens_written - s0.tokens_written;
        const cpuMs = one.cpu_ms ? one.cpu_ms.user + one.cpu_ms.system : null;
        out.push({ round: r + 1, ...one, chunks, chunks_per_cpu_s: cpuMs ? Math.round(chunks / (cpuMs / 1000)) : null });
        process.stderr.write(`[profile] ${one.client}: ${chunks} chunks, cpu ${JSON.stringify(one.cpu_ms)}\n`);
      }
    }
  } finally {
    await server.stop();
  }
  process.stdout.write(`${JSON.stringify({ load, note: 'CPU figures include the profiler', runs: out }, null, 1)}\n`);
}

await main();
