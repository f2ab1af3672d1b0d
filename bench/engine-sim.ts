// engine_sim: streams and tokens per second one engine-sim process (`--engine simple`) serves,
// and how late its engine steps ran meanwhile (its own `loadfleet_sim_step_overrun_seconds`).
// Driven by the bare undici client (the cheapest one) at rising concurrency; a fresh simulator
// per level, so its counters start at zero.
import type { ClientReport } from './client-args.js';
import { clientArgv } from './client-args.js';
import { processCpuMs } from './proc.js';
import { round3 } from './sampler.js';
import { lastJsonLine, startNode } from './spawn.js';
import type { BenchContext, Suite, SuiteResult } from './suite.js';
import { fmt } from './suite.js';

const ITL_MS = 8;
const TOKENS = 128;

/** Sum of every sample of `name` (any labels) in Prometheus text. */
function sumOf(text: string, name: string): number {
  let total = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) total += Number(line.split(' ').at(-1));
  return total;
}

/** Cumulative bucket counts by upper bound, from `<name>_bucket{…,le="x"} n` lines. */
function buckets(text: string, name: string): [number, number][] {
  const out: [number, number][] = [];
  for (const m of text.matchAll(new RegExp(`^${name}_bucket\\{[^}]*le="([^"]+)"[^}]*\\} (\\S+)$`, 'gm'))) {
    out.push([m[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[1]), Number(m[2])]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

/** The upper bound of the bucket holding the q-quantile (a bound, not an estimate). */
function quantileBound(b: readonly [number, number][], q: number): number | null {
  const total = b.at(-1)?.[1] ?? 0;
  if (total === 0) return null;
  return b.find(([, n]) => n >= q * total)?.[0] ?? null;
}

async function measure(streams: number, durationS: number) {
  const sim = startNode('sim/main.js', ['--engine', 'simple', '--port', '0', '--model', 'paced', '--max-concurrency', String(streams)]);
  const listening = JSON.parse(await sim.firstLine) as { base_url: string; metrics_url: string };
  try {
    const cpu0 = processCpuMs(sim.pid) ?? 0;
    const t0 = performance.now();
    const load = { baseUrl: listening.base_url, concurrency: streams, tokens: TOKENS, durationS, gapMs: ITL_MS, firstMs: 0 };
    const done = await startNode('bench/bare-undici-client.js', clientArgv(load)).exited;
    const wallS = (performance.now() - t0) / 1000;
    const simCpuS = ((processCpuMs(sim.pid) ?? 0) - cpu0) / 1000;
    const client = lastJsonLine<ClientReport>(done.stdout);
    const text = await (await fetch(listening.metrics_url)).text();
    const tokens = sumOf(text, 'vllm:generation_tokens_total');
    const overrun = buckets(text, 'loadfleet_sim_step_overrun_seconds');
    const steps = overrun.at(-1)?.[1] ?? 0;
    const underMs = overrun.find(([le]) => le === 0.001)?.[1] ?? 0;
    const p99 = quantileBound(overrun, 0.99);
    return {
      streams,
      tokens_per_s: Math.round(tokens / wallS),
      requests_per_s: round3(sumOf(text, 'vllm:request_success_total') / wallS),
      sim_cpu_utilisation: round3(simCpuS / wallS),
      tokens_per_sim_cpu_s: simCpuS > 0 ? Math.round(tokens / simCpuS) : null,
      steps,
      steps_overrun_under_1ms_share: steps > 0 ? round3(underMs / steps) : null,
      step_overrun_p99_bound_ms: p99 === null ? null : p99 * 1000,
      client_errors: client.errors,
    };
  } finally {
    await sim.stop();
  }
}

async function run(ctx: BenchContext): Promise<SuiteResult> {
  const levels = ctx.quick ? [16, 64] : [64, 256, 768];
  const durationS = ctx.quick ? 2 : 6;
  const out = [];
  for (const n of levels) {
    ctx.log(`engine_sim: ${n} streams for ${durationS} s`);
    out.push(await measure(n, durationS));
  }
  const fine = out.filter((o) => o.step_overrun_p99_bound_ms !== null && o.step_overrun_p99_bound_ms <= 1);
  const best = fine.at(-1);
  return {
    figures: {
      engine: { kind: 'simple', itl_ms: ITL_MS, tokens_per_request: TOKENS },
      levels: out,
      best_under_1ms_overrun: best ? { streams: best.streams, tokens_per_s: best.tokens_per_s } : null,
      overrun_definition: 'p99 is an upper bound: the edge of the histogram bucket (0.1, 0.5, 1, 2, 5 … ms) holding it',
    },
    table: out.map((o) => ({
      figure: `${o.streams} streams: tokens/s (overrun p99 ≤ ms)`,
      value: `${fmt(o.tokens_per_s)} (${fmt(o.step_overrun_p99_bound_ms, 1)})`,
      goal: 'overrun < 1 ms',
    })),
  };
}

/** The engine_sim suite. */
export const engineSim: Suite = { name: 'engine_sim', run };
