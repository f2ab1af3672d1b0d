// schedule_fidelity: how late one agent sends open-loop requests (sent − intended) at rising
// constant rates, with short streams so in-flight work stays modest. Read from run.json
// (`classes.bench.windows.all.schedule_lag_*`), i.e. exactly what a user would see.
import { startPacedServer } from './paced-server.js';
import { constantRatePlan } from './plans.js';
import { allWindow, runOutcome, runPlan } from './run-plan.js';
import { ProcSampler } from './sampler.js';
import type { BenchContext, Suite, SuiteResult } from './suite.js';
import { fmt } from './suite.js';

const GAP_MS = 5;
const TOKENS = 4;

function num(v: unknown): number | null {
  return typeof v === 'number' ? v : null;
}

async function measureRate(baseUrl: string, ratePerS: number, durationS: number, dist?: string) {
  const plan = constantRatePlan({
    name: `bench-schedule-${ratePerS}`,
    baseUrl,
    ratePerS,
    durationS,
    tokens: TOKENS,
    gapMs: GAP_MS,
    firstMs: GAP_MS,
    drainS: 10,
  });
  const sampler = new ProcSampler();
  const result = await runPlan(plan, { onSample: (pids) => void sampler.sample(pids), sampleEveryMs: 250, ...(dist && { dist }) });
  const w = allWindow(result.run);
  const agent = result.run.agents[0];
  const startMs = Number(result.run.started_at_unix_ns / 1_000_000n);
  result.cleanup();
  return {
    rate_per_s: ratePerS,
    requests: num(w.requests),
    failed: num(w.failed),
    schedule_lag_p50_ms: num(w.schedule_lag_p50_ms),
    schedule_lag_p99_ms: num(w.schedule_lag_p99_ms),
    schedule_lag_max_ms: num(w.schedule_lag_max_ms),
    agent_event_loop_delay_p99_ms: agent?.event_loop_delay_p99_ms ?? null,
    agent_cpu_utilisation: sampler.processUtilisation(startMs + 500, startMs + durationS * 1000),
    machine_busy_cores: sampler.machineBusyCores(startMs + 500, startMs + durationS * 1000),
    client_limited: result.run.client_health.client_limited,
    ...runOutcome(result.run),
  };
}

async function run(ctx: BenchContext): Promise<SuiteResult> {
  const rates = ctx.quick ? [50, 200, 500] : [200, 1000, 5000];
  const durationS = ctx.quick ? 2 : 5;
  const server = await startPacedServer(GAP_MS, GAP_MS);
  try {
    const out: Awaited<ReturnType<typeof measureRate>>[] = [];
    const base: Awaited<ReturnType<typeof measureRate>>[] = [];
    for (const rate of rates) {
      ctx.log(`schedule_fidelity: ${rate} requests/s for ${durationS} s`);
      out.push(await measureRate(server.baseUrl, rate, durationS));
      // The earlier build right after, at the same rate (before and after side by side).
      if (ctx.baseDist) base.push(await measureRate(server.baseUrl, rate, durationS, ctx.baseDist));
    }
    const atThousand = out.find((o) => o.rate_per_s === 1000);
    return {
      figures: {
        stream: { tokens: TOKENS, gap_ms: GAP_MS, duration_s: durationS },
        rates: out,
        ...(ctx.baseDist && { base_dist: ctx.baseDist, rates_base: base }),
        goal: { schedule_lag_p99_ms_max_at_1000_rps: 2 },
        goal_met: atThousand ? (atThousand.schedule_lag_p99_ms ?? Number.POSITIVE_INFINITY) < 2 : null,
      },
      table: out.map((o, i) => ({
        figure: `${o.rate_per_s} req/s lag p50/p99 ms${base[i] ? ' (base →)' : ''}`,
        value: `${base[i] ? `${fmt(base[i].schedule_lag_p50_ms, 3)} / ${fmt(base[i].schedule_lag_p99_ms, 3)} → ` : ''}${fmt(o.schedule_lag_p50_ms, 3)} / ${fmt(o.schedule_lag_p99_ms, 3)}`,
        ...(o.rate_per_s === 1000 ? { goal: 'p99 < 2' } : {}),
      })),
    };
  } finally {
    await server.stop();
  }
}

/** The schedule_fidelity suite. */
export const scheduleFidelity: Suite = { name: 'schedule_fidelity', run };
