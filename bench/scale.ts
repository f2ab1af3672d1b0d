// scale: how many concurrent open streams one agent process holds, and what each costs in memory.
// A closed loop ramps to N streams against a paced server with a long gap between tokens (so no
// stream ends during the hold); while they are open the agent's RSS is read from /proc and the
// server counts the streams it has open. Memory per stream = (RSS held − RSS idle) / streams.
// Beside it, the floor: bare undici `dispatch` (bare-undici-client.ts, no parsing, no records)
// holding as many streams the same way, in a process started with the agent's V8 flags
// (shared/agent-node-flags.ts), so the figure shows what a Node socket and undici's own
// per-connection state cost before any of ours.
import { AGENT_NODE_FLAGS } from '../shared/agent-node-flags.js';
import { clientArgv } from './client-args.js';
import { startPacedServer } from './paced-server.js';
import { rampedClosedLoopPlan } from './plans.js';
import { runOutcome, runPlan } from './run-plan.js';
import type { ProcSample } from './sampler.js';
import { ProcSampler, round3 } from './sampler.js';
import { distFile, sleep, startChild } from './spawn.js';
import type { BenchContext, Suite, SuiteResult } from './suite.js';
import { fmt } from './suite.js';

const GAP_MS = 1000;
const FIRST_MS = 200;
const START_S = 2;
const RAMP_S = 2;

async function measure(streams: number, quick: boolean) {
  const holdS = quick ? 2 : 5;
  const durationS = START_S + RAMP_S + holdS;
  const server = await startPacedServer(GAP_MS, FIRST_MS);
  try {
    const plan = rampedClosedLoopPlan({
      name: `bench-scale-${streams}`,
      baseUrl: server.baseUrl,
      concurrency: streams,
      startS: START_S,
      rampS: RAMP_S,
      durationS,
      // More tokens than the run lasts: every stream is still open when the run stops.
      tokens: durationS + 30,
      gapMs: GAP_MS,
      firstMs: FIRST_MS,
      drainS: 1,
    });
    const sampler = new ProcSampler();
    const open: (ProcSample & { streams: number })[] = [];
    const result = await runPlan(plan, {
      sampleEveryMs: 200,
      onSample: async (pids) => {
        const s = sampler.sample(pids);
        if (s) open.push({ ...s, streams: (await server.stats()).active });
      },
    });
    const startMs = Number(result.run.started_at_unix_ns / 1_000_000n);
    const idle = open.filter((s) => s.unixMs < startMs + START_S * 1000 - 100).at(-1);
    const holdFrom = startMs + (START_S + RAMP_S) * 1000;
    const held = open.filter((s) => s.unixMs >= holdFrom && s.unixMs <= startMs + durationS * 1000);
    const peak = held.reduce<(typeof held)[number] | undefined>((best, s) => (best && best.streams >= s.streams ? best : s), undefined);
    const rows = result.requests();
    const outcome = runOutcome(result.run);
    result.cleanup();
    const perStreamKib = idle && peak && peak.streams > 0 ? (peak.rssKib - idle.rssKib) / peak.streams : null;
    return {
      target_streams: streams,
      streams_open: peak?.streams ?? 0,
      rss_idle_mib: idle ? round3(idle.rssKib / 1024) : null,
      rss_held_mib: peak ? round3(peak.rssKib / 1024) : null,
      memory_per_stream_kib: perStreamKib === null ? null : round3(perStreamKib),
      event_loop_utilisation_held: sampler.mainThreadUtilisation(holdFrom, startMs + durationS * 1000),
      requests: rows.length,
      // Streams still open at the stop end as `aborted`; anything else is a real failure.
      failed_other_than_stop: rows.filter((r) => r.status !== 'ok' && r.status !== 'aborted').length,
      ...outcome,
    };
  } finally {
    await server.stop();
  }
}

// The floor: the bare undici client waits START_S (the idle reading), starts its streams evenly
// over RAMP_S and holds them; it is stopped after the hold (its streams never end by themselves).
async function measureBare(streams: number, quick: boolean) {
  const holdS = quick ? 2 : 5;
  const server = await startPacedServer(GAP_MS, FIRST_MS);
  const load = { baseUrl: server.baseUrl, concurrency: streams, tokens: 1000, gapMs: GAP_MS, firstMs: FIRST_MS };
  // Started with the agent's V8 flags: the floor is the same process kind minus the agent's work.
  const client = startChild(process.execPath, [
    ...AGENT_NODE_FLAGS,
    distFile('bench/bare-undici-client.js'),
    ...clientArgv({ ...load, durationS: 600, idleS: START_S, rampS: RAMP_S }),
  ]);
  try {
    const sampler = new ProcSampler();
    const samples: (ProcSample & { streams: number })[] = [];
    let rampStartMs: number | null = null;
    const t0 = Date.now();
    while (Date.now() - t0 < (START_S + RAMP_S + holdS + 5) * 1000) {
      await sleep(200);
      const s = sampler.sample([client.pid]);
      if (!s) break;
      const active = (await server.stats()).active;
      samples.push({ ...s, streams: active });
      if (active > 0) rampStartMs ??= s.unixMs;
      if (rampStartMs !== null && s.unixMs >= rampStartMs + (RAMP_S + holdS) * 1000) break;
    }
    const idle = samples.filter((s) => s.streams === 0 && (rampStartMs === null || s.unixMs < rampStartMs)).at(-1);
    const held = rampStartMs === null ? [] : samples.filter((s) => s.unixMs >= rampStartMs! + RAMP_S * 1000);
    const peak = held.reduce<(typeof held)[number] | undefined>((best, s) => (best && best.streams >= s.streams ? best : s), undefined);
    const perStreamKib = idle && peak && peak.streams > 0 ? (peak.rssKib - idle.rssKib) / peak.streams : null;
    return {
      streams_open: peak?.streams ?? 0,
      rss_idle_mib: idle ? round3(idle.rssKib / 1024) : null,
      rss_held_mib: peak ? round3(peak.rssKib / 1024) : null,
      memory_per_stream_kib: perStreamKib === null ? null : round3(perStreamKib),
    };
  } finally {
    await client.stop();
    await server.stop();
  }
}

async function run(ctx: BenchContext): Promise<SuiteResult> {
  const sizes = ctx.quick ? [100, 300] : [1000, 10000];
  const out = [];
  for (const n of sizes) {
    ctx.log(`scale: ${n} open streams`);
    const agent = await measure(n, ctx.quick);
    ctx.log(`scale: ${n} open streams, bare undici`);
    const bare = await measureBare(n, ctx.quick).catch((err: Error) => ({ error: err.message.slice(0, 500) }));
    const floor = 'memory_per_stream_kib' in bare ? bare.memory_per_stream_kib : null;
    out.push({
      ...agent,
      bare_undici: bare,
      agent_over_bare_kib: agent.memory_per_stream_kib !== null && floor !== null ? round3(agent.memory_per_stream_kib - floor) : null,
    });
  }
  const largest = out.at(-1);
  return {
    figures: {
      stream: { gap_ms: GAP_MS, first_token_ms: FIRST_MS, ramp_s: RAMP_S },
      definitions: {
        memory_per_stream_kib: '(agent RSS with the streams open − its RSS before the first request) / streams open, KiB',
        bare_undici:
          'the same streams held by bare undici dispatch (no parsing, stamps or records): the floor a Node client pays per socket',
        agent_over_bare_kib: "the agent's memory per stream minus bare undici's: what the agent's own per-request state costs",
      },
      levels: out,
      goal: { streams_min: 10000, memory_per_stream_kib_max: 10 },
      goals_met: largest
        ? {
            streams: largest.streams_open >= 10000,
            memory_per_stream: largest.memory_per_stream_kib !== null && largest.memory_per_stream_kib <= 10,
          }
        : null,
    },
    table: out.flatMap((o) => [
      { figure: `${o.target_streams} target: streams held`, value: fmt(o.streams_open), goal: '≥ 10,000' },
      { figure: `${o.target_streams} target: KiB per stream`, value: fmt(o.memory_per_stream_kib, 2), goal: '≤ 10' },
      {
        figure: `${o.target_streams} target: bare undici KiB per stream`,
        value: 'memory_per_stream_kib' in o.bare_undici ? fmt(o.bare_undici.memory_per_stream_kib, 2) : 'error',
        goal: 'floor',
      },
    ]),
  };
}

/** The scale suite. */
export const scale: Suite = { name: 'scale', run };
