// scale: how many concurrent open streams one agent process holds, and what each costs in memory.
// A closed loop ramps to N streams against a paced server with a long gap between tokens (so no
// stream ends during the hold); while they are open the agent's RSS is read from /proc and the
// server counts the streams it has open. Memory per stream = (RSS held − RSS idle) / streams.
import { startPacedServer } from './paced-server.js';
import { rampedClosedLoopPlan } from './plans.js';
import { runOutcome, runPlan } from './run-plan.js';
import type { ProcSample } from './sampler.js';
import { ProcSampler, round3 } from './sampler.js';
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

async function run(ctx: BenchContext): Promise<SuiteResult> {
  const sizes = ctx.quick ? [100, 300] : [1000, 10000];
  const out = [];
  for (const n of sizes) {
    ctx.log(`scale: ${n} open streams`);
    out.push(await measure(n, ctx.quick));
  }
  const largest = out.at(-1);
  return {
    figures: {
      stream: { gap_ms: GAP_MS, first_token_ms: FIRST_MS, ramp_s: RAMP_S },
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
    ]),
  };
}

/** The scale suite. */
export const scale: Suite = { name: 'scale', run };
