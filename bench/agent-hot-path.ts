// agent_hot_path: how many streamed chunks each client handles per CPU-second at the same offered
// load (a closed loop of N streams × T tokens for D seconds against one paced server): the
// loadfleet agent doing all its timing and recording, a bare undici dispatch loop, autocannon and
// a minimal aiohttp client. Chunks are counted by the server (tokens it wrote during that client's
// run), so every client is counted the same way; each client's CPU is its own process's.
import type { ClientLoad, ClientReport } from './client-args.js';
import { clientArgv } from './client-args.js';
import type { PacedServer } from './paced-server.js';
import { startPacedServer } from './paced-server.js';
import { closedLoopPlan } from './plans.js';
import { machineCpuMs, processCpuMs } from './proc.js';
import { findAiohttpPython } from './python.js';
import { runOutcome, runPlan } from './run-plan.js';
import { ProcSampler, round3 } from './sampler.js';
import { benchSource, distFile, lastJsonLine, startChild } from './spawn.js';
import type { BenchContext, Suite, SuiteResult, TableRow } from './suite.js';
import { fmt } from './suite.js';

/** One client's figures. */
interface ClientFigures {
  chunks: number;
  chunks_seen_by_client: number | null;
  responses: number;
  errors: number;
  cpu_ms: number;
  wall_ms: number;
  cpu_utilisation: number;
  chunks_per_cpu_s: number;
  /** The paced server's CPU and the whole machine's busy cores meanwhile (context: is the machine full?). */
  server_cpu_utilisation: number;
  machine_busy_cores: number;
  /** TCP connections the server accepted meanwhile (more than the streams: the pool opened extra ones). */
  connections_opened: number;
  note?: string;
}

const GAP_MS = 20;

function figures(
  chunks: number,
  r: ClientReport,
): Omit<ClientFigures, 'server_cpu_utilisation' | 'machine_busy_cores' | 'connections_opened'> {
  return {
    chunks,
    chunks_seen_by_client: r.chunks_seen,
    responses: r.responses,
    errors: r.errors,
    cpu_ms: Math.round(r.cpu_ms),
    wall_ms: Math.round(r.wall_ms),
    cpu_utilisation: round3(r.cpu_ms / r.wall_ms),
    chunks_per_cpu_s: Math.round(chunks / (r.cpu_ms / 1000)),
    ...(r.note ? { note: r.note } : {}),
  };
}

// Runs `start()` and counts the tokens the server wrote while it ran, and what the server and the
// machine used meanwhile.
async function counted(server: PacedServer, start: () => Promise<ClientReport>): Promise<ClientFigures> {
  const stats0 = await server.stats();
  const before = {
    tokens: stats0.tokens_written,
    connections: stats0.connections,
    serverMs: processCpuMs(server.pid) ?? 0,
    machine: machineCpuMs(),
    t: performance.now(),
  };
  const report = await start();
  const wallMs = performance.now() - before.t;
  const stats1 = await server.stats();
  return {
    ...figures(stats1.tokens_written - before.tokens, report),
    connections_opened: stats1.connections - before.connections,
    server_cpu_utilisation: round3(((processCpuMs(server.pid) ?? 0) - before.serverMs) / wallMs),
    machine_busy_cores: round3((machineCpuMs().busyMs - before.machine.busyMs) / wallMs),
  };
}

async function agent(
  server: PacedServer,
  load: ClientLoad,
  dist?: string,
): Promise<ClientFigures & { event_loop_utilisation: number | null } & ReturnType<typeof runOutcome>> {
  const sampler = new ProcSampler();
  const plan = closedLoopPlan({ ...load, name: 'bench-hot-path', drainS: 30 });
  let result: Awaited<ReturnType<typeof runPlan>> | undefined;
  const f = await counted(server, async () => {
    result = await runPlan(plan, { onSample: (pids) => void sampler.sample(pids), sampleEveryMs: 250, ...(dist && { dist }) });
    const a = result.run.agents[0]!;
    const wallMs = Number(result.run.finished_at_unix_ns - result.run.started_at_unix_ns) / 1e6;
    const seen = result.requests().reduce((n, r) => n + r.content_chunks, 0);
    return { cpu_ms: a.cpu_ms ?? Number.NaN, wall_ms: wallMs, responses: a.completed, chunks_seen: seen, bytes: null, errors: a.failed };
  });
  const startMs = Number(result!.run.started_at_unix_ns / 1_000_000n);
  const elu = sampler.mainThreadUtilisation(startMs + 1000, startMs + load.durationS * 1000);
  const outcome = runOutcome(result!.run);
  result!.cleanup();
  return { ...f, event_loop_utilisation: elu, ...outcome };
}

async function childClient(server: PacedServer, command: string, args: string[]): Promise<ClientFigures> {
  return counted(server, async () => {
    const done = await startChild(command, args).exited;
    if (done.code !== 0) throw new Error(`${command} ${args[0]} exited ${done.code}: ${done.stderr.slice(-2000)}`);
    return lastJsonLine<ClientReport>(done.stdout);
  });
}

function nodeClient(server: PacedServer, script: string, load: ClientLoad): Promise<ClientFigures> {
  return childClient(server, process.execPath, [distFile(script), ...clientArgv(load)]);
}

// A client that could not run is reported with its reason instead of failing the suite.
async function orReason<T>(what: () => Promise<T>): Promise<T | { not_measured: string }> {
  try {
    return await what();
  } catch (err) {
    return { not_measured: (err as Error).message.slice(0, 500) };
  }
}

function cps(x: ClientFigures | { not_measured: string }): number | null {
  return 'chunks_per_cpu_s' in x ? x.chunks_per_cpu_s : null;
}

function ratio(a: number | null, b: number | null): number | null {
  return a !== null && b !== null && b > 0 ? round3(a / b) : null;
}

// Side by side: the agent (and with --base-dist an earlier build's) and bare undici run AT THE SAME
// TIME against one paced server, each counting its own tokens (complete answers × tokens), so all
// meet the same machine in the same seconds: on a shared host their CPU per unit of work compares
// where figures taken one after another do not (the others' load moves between runs).
// Three loads: the goal's (400 × 128 tokens); 1-token answers, where a request's fixed cost (build,
// send, headers, end, bookkeeping) dominates; 1,000-token answers, where a chunk's does (read,
// stamp, SSE scan, classification).
const SPLIT_GAP_MS = 5;

interface SideFigures {
  cpu_ms: number;
  responses: number;
  errors: number;
  tokens: number;
  cpu_us_per_request: number | null;
  cpu_us_per_token: number | null;
  tokens_per_cpu_s: number;
}

function sideFigures(cpuMs: number, responses: number, errors: number, tokensPerAnswer: number): SideFigures {
  const tokens = responses * tokensPerAnswer;
  return {
    cpu_ms: Math.round(cpuMs),
    responses,
    errors,
    tokens,
    cpu_us_per_request: responses > 0 ? round3((cpuMs * 1000) / responses) : null,
    cpu_us_per_token: tokens > 0 ? round3((cpuMs * 1000) / tokens) : null,
    tokens_per_cpu_s: Math.round(tokens / (cpuMs / 1000)),
  };
}

async function sideAgent(load: ClientLoad, dist?: string): Promise<SideFigures> {
  const plan = closedLoopPlan({ ...load, name: 'bench-side-by-side', drainS: 30 });
  const result = await runPlan(plan, dist ? { dist } : {});
  const a = result.run.agents[0]!;
  const ok = result.requests().filter((r) => r.status === 'ok').length;
  result.cleanup();
  return sideFigures(a.cpu_ms ?? Number.NaN, ok, a.failed, load.tokens);
}

async function sideBare(load: ClientLoad): Promise<SideFigures> {
  const done = await startChild(process.execPath, [distFile('bench/bare-undici-client.js'), ...clientArgv(load)]).exited;
  if (done.code !== 0) throw new Error(`bare-undici-client exited ${done.code}: ${done.stderr.slice(-2000)}`);
  const r = lastJsonLine<ClientReport>(done.stdout);
  return sideFigures(r.cpu_ms, r.responses, r.errors, load.tokens);
}

async function sideBySide(ctx: BenchContext, name: string, load: ClientLoad) {
  ctx.log(`agent_hot_path: side by side (${name}), ${load.concurrency} streams × ${load.tokens} tokens for ${load.durationS} s`);
  const machine0 = machineCpuMs();
  const t0 = performance.now();
  const [lf, base, bare] = await Promise.all([
    sideAgent(load),
    ctx.baseDist ? sideAgent(load, ctx.baseDist) : Promise.resolve(null),
    orReason(() => sideBare(load)),
  ]);
  const busy = round3((machineCpuMs().busyMs - machine0.busyMs) / (performance.now() - t0));
  const bareOk = 'cpu_ms' in bare ? bare : null;
  const over = (a: SideFigures | null, key: 'cpu_us_per_request' | 'cpu_us_per_token'): number | null =>
    a && bareOk && a[key] !== null && bareOk[key] !== null ? round3(a[key]! - bareOk[key]!) : null;
  return {
    load: { concurrency: load.concurrency, tokens: load.tokens, duration_s: load.durationS, gap_ms: load.gapMs },
    machine_busy_cores: busy,
    loadfleet_agent: lf,
    ...(base && { loadfleet_agent_base: base }),
    bare_undici: bare,
    ratio_vs_bare_undici: ratio(lf.tokens_per_cpu_s, bareOk?.tokens_per_cpu_s ?? null),
    ...(base && { base_ratio_vs_bare_undici: ratio(base.tokens_per_cpu_s, bareOk?.tokens_per_cpu_s ?? null) }),
    agent_over_bare_us: { per_request: over(lf, 'cpu_us_per_request'), per_token: over(lf, 'cpu_us_per_token') },
    ...(base && { base_over_bare_us: { per_request: over(base, 'cpu_us_per_request'), per_token: over(base, 'cpu_us_per_token') } }),
  };
}

async function costSplit(ctx: BenchContext, server: PacedServer, goalLoad: ClientLoad) {
  const gap = { baseUrl: server.baseUrl, gapMs: SPLIT_GAP_MS, firstMs: SPLIT_GAP_MS };
  return {
    // A quick run measures only 1-token answers (the suite's own figure runs the goal's load): each
    // side-by-side run starts a coordinator and agents, seconds on a busy machine.
    goal_load: ctx.quick ? null : await sideBySide(ctx, 'goal load', goalLoad),
    per_request: await sideBySide(ctx, '1-token answers', {
      ...gap,
      ...(ctx.quick ? { concurrency: 20, tokens: 1, durationS: 1 } : { concurrency: 100, tokens: 1, durationS: 10 }),
    }),
    // 10 ms between tokens here: at 5 ms a slower client fell behind and read several tokens at once,
    // which flatters its CPU per token. Left out of a quick run too (the same code as per_request).
    per_chunk: ctx.quick
      ? null
      : await sideBySide(ctx, '1,000-token answers', { ...gap, gapMs: 10, firstMs: 10, concurrency: 50, tokens: 1000, durationS: 10 }),
  };
}

async function run(ctx: BenchContext): Promise<SuiteResult> {
  const load: ClientLoad = ctx.quick
    ? { baseUrl: '', concurrency: 40, tokens: 32, durationS: 3, gapMs: GAP_MS, firstMs: GAP_MS }
    : { baseUrl: '', concurrency: 400, tokens: 128, durationS: 15, gapMs: GAP_MS, firstMs: GAP_MS };
  const server = await startPacedServer(GAP_MS, GAP_MS);
  load.baseUrl = server.baseUrl;
  try {
    ctx.log(`agent_hot_path: loadfleet agent, ${load.concurrency} streams × ${load.tokens} tokens for ${load.durationS} s`);
    const lf = await agent(server, load);
    const base = ctx.baseDist ? await agent(server, load, ctx.baseDist) : null;
    ctx.log('agent_hot_path: bare undici dispatch');
    const bare = await orReason(() => nodeClient(server, 'bench/bare-undici-client.js', load));
    ctx.log('agent_hot_path: autocannon');
    const ac = await orReason(() => nodeClient(server, 'bench/autocannon-client.js', load));
    ctx.log('agent_hot_path: aiohttp');
    const py = findAiohttpPython();
    const aio =
      'python' in py
        ? await orReason(() => childClient(server, py.python, [benchSource('aiohttp_client.py'), ...clientArgv(load)]))
        : { not_measured: py.missing };
    const vsBare = ratio(lf.chunks_per_cpu_s, cps(bare));
    const baseVsBare = base ? ratio(base.chunks_per_cpu_s, cps(bare)) : null;
    const vsAio = ratio(lf.chunks_per_cpu_s, cps(aio));
    const split = await costSplit(ctx, server, load);
    const splitRow = (
      s: Awaited<ReturnType<typeof sideBySide>> | null,
      k: 'cpu_us_per_request' | 'cpu_us_per_token',
      unit: string,
    ): TableRow => {
      if (s === null) return { figure: `${unit}: agent vs bare undici`, value: 'n/a (--quick)' };
      const b = s.bare_undici;
      const old = 'loadfleet_agent_base' in s ? s.loadfleet_agent_base : undefined;
      return {
        figure: `${unit}: agent${old ? ' (base →)' : ''} vs bare undici`,
        value: `${old ? `${fmt(old[k], 1)} → ` : ''}${fmt(s.loadfleet_agent[k], 1)} vs ${'cpu_ms' in b ? fmt(b[k], 1) : 'n/a'}`,
      };
    };
    const g = split.goal_load;
    const withBase = g !== null && 'base_ratio_vs_bare_undici' in g;
    const sideRatio = `${withBase ? `${fmt(g.base_ratio_vs_bare_undici, 3)} → ` : ''}${fmt(g?.ratio_vs_bare_undici, 3)}`;
    const table: TableRow[] = [
      { figure: 'loadfleet agent chunks/CPU-s', value: fmt(lf.chunks_per_cpu_s) },
      { figure: 'bare undici chunks/CPU-s', value: fmt(cps(bare)) },
      { figure: 'autocannon chunks/CPU-s', value: fmt(cps(ac)) },
      { figure: 'aiohttp chunks/CPU-s', value: fmt(cps(aio)) },
      ...(base ? [{ figure: 'base agent chunks/CPU-s', value: fmt(base.chunks_per_cpu_s) }] : []),
      {
        figure: `agent / bare undici${base ? ' (base →)' : ''}`,
        value: `${base ? `${fmt(baseVsBare, 3)} → ` : ''}${fmt(vsBare, 3)}`,
        goal: '≥ 0.9',
      },
      { figure: `agent / bare undici side by side${withBase ? ' (base →)' : ''}`, value: sideRatio, goal: '≥ 0.9' },
      splitRow(split.per_request, 'cpu_us_per_request', 'CPU µs per 1-token request'),
      splitRow(split.per_chunk, 'cpu_us_per_token', 'CPU µs per token (1,000-token answers)'),
      { figure: 'agent / aiohttp', value: fmt(vsAio, 3), goal: '≥ 1.5' },
    ];
    return {
      figures: {
        offered_load: { concurrency: load.concurrency, tokens: load.tokens, duration_s: load.durationS, gap_ms: load.gapMs },
        chunks_definition: 'token SSE events the paced server wrote while that client ran (each its own TCP segment)',
        cpu_definition:
          'user + system CPU of the client process over its load window (agent: run.json agents[0].cpu_ms; others: their own process counters)',
        loadfleet_agent: lf,
        ...(base && { loadfleet_agent_base: base, base_ratio_vs_bare_undici: baseVsBare }),
        bare_undici: bare,
        cost_split: split,
        autocannon: ac,
        aiohttp: aio,
        ratio_vs_bare_undici: vsBare,
        ratio_vs_aiohttp: vsAio,
        // The goals (first set at 0.85 and 1.3).
        goals: { ratio_vs_bare_undici_min: 0.9, ratio_vs_aiohttp_min: 1.5 },
        goals_met: {
          ratio_vs_bare_undici: vsBare === null ? null : vsBare >= 0.9,
          side_by_side_ratio_vs_bare_undici: g === null || g.ratio_vs_bare_undici === null ? null : g.ratio_vs_bare_undici >= 0.9,
          ratio_vs_aiohttp: vsAio === null ? null : vsAio >= 1.5,
        },
      },
      table,
    };
  } finally {
    await server.stop();
  }
}

/** The agent_hot_path suite. */
export const agentHotPath: Suite = { name: 'agent_hot_path', run };
