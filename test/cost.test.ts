// Cost per million tokens, tokens/s per accelerator and per user, and the Pareto front, end to
// end: real coordinator, agents and engine-sim processes on loopback. Every figure is computed
// again here from requests.ndjson, independently of the coordinator's code.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../shared/errors.js';
import type { Plan } from '../shared/plan.js';
import { SIM_ARGS, writeSweep } from './fixture-plans.js';
import { onlyRunDir, readRequests, readRunJson, runCoordinator, startNode, tempDir, writePlan } from './harness.js';

const PLAN: Plan = {
  schema: 'loadfleet.plan/v1',
  name: 'cost',
  seed: 5,
  duration_s: 3,
  drain_timeout_s: 5,
  // The flags below replace the price and the accelerators: what the run states is theirs.
  cost: { usd_per_accelerator_hour: 2.5, accelerators: { type: 'A100', count: 4 } },
  classes: [
    {
      name: 'rt',
      prompt: { input_tokens: 24, output_tokens: 12 },
      load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 3, rate_per_s: 12 }] },
    },
    {
      name: 'bulk',
      prompt: { input_tokens: 200, output_tokens: 6 },
      load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 3, rate_per_s: 6 }] },
    },
  ],
  windows: [{ name: 'mid', start_s: 1, end_s: 2 }],
};

const USD_PER_HOUR = 98.32;
const ACCELERATORS = 8;

// Nearest rank, index ceil(q·n) − 1, as the studies define percentiles.
function nearestRank(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

// The figures of the rows of one window, by the published formulas.
function byHand(rows: any[], lengthS: number) {
  const ok = rows.filter((r) => r.status === 'ok');
  const out = ok.reduce((s, r) => s + (r.completion_tokens ?? 0), 0);
  const inp = ok.reduce((s, r) => s + (r.prompt_tokens ?? 0), 0);
  // TPOT = (done − first output) / (completion tokens − 1), exact counts only, at least 2 tokens.
  const tpotsMs = ok
    .filter((r) => (r.output_token_source === 'usage' || r.output_token_source === 'tokenizer') && r.completion_tokens >= 2)
    .map((r) => Number(r.done_unix_ns - r.first_output_unix_ns) / (r.completion_tokens - 1) / 1e6)
    .sort((a, b) => a - b);
  return {
    completed: ok.length,
    out,
    inp,
    outTokS: out / lengthS,
    inTokS: inp / lengthS,
    perUser: tpotsMs.length > 0 ? 1000 / nearestRank(tpotsMs, 0.5) : null,
    usdPerMOut: (USD_PER_HOUR / ((out / lengthS) * 3600)) * 1e6,
    usdPerMIn: (USD_PER_HOUR / ((inp / lengthS) * 3600)) * 1e6,
  };
}

// The per-user rate comes from the merged TPOT histogram (3 significant digits, its p50 rounded to
// the µs), so it is compared within 0.1%; the token counts are exact.
function closeTo(actual: number | null, expected: number | null, relative: number): void {
  expect(actual).not.toBeNull();
  expect(expected).not.toBeNull();
  expect(Math.abs(actual! - expected!) / expected!, `${actual} vs ${expected}`).toBeLessThan(relative);
}

describe('cost and token figures', () => {
  it('states cost per million tokens, tokens/s per accelerator and per user as computed by hand from requests.ndjson', async () => {
    const work = tempDir();
    const res = await runCoordinator([
      '--plan',
      writePlan(work, PLAN),
      '--out',
      join(work, 'out'),
      '--quiet',
      '--agents',
      '2',
      '--cost-per-hour',
      String(USD_PER_HOUR),
      '--accelerators',
      `H100-80GB:${ACCELERATORS}`,
    ]);
    expect(res.code, res.stderr).toBe(0);
    const dir = onlyRunDir(join(work, 'out'));
    const run = readRunJson(dir);
    const rows = readRequests(dir);
    const cost = run.cost;
    expect(cost).toMatchObject({
      usd_per_hour: USD_PER_HOUR,
      price_basis: 'usd_per_hour',
      accelerators: { type: 'H100-80GB', count: ACCELERATORS },
      null_reasons: { usd_figures: null, per_accelerator_figures: null },
    });
    expect(run.plan.cost).toEqual({ usd_per_hour: USD_PER_HOUR, accelerators: { type: 'H100-80GB', count: ACCELERATORS } });
    const start = run.started_at_unix_ns as bigint;
    const runS = Number((run.finished_at_unix_ns as bigint) - start) / 1e9;
    const inMid = (r: any) => r.intended_unix_ns - start >= 1_000_000_000n && r.intended_unix_ns - start < 2_000_000_000n;
    for (const [w, lengthS, member] of [
      ['all', runS, () => true],
      ['mid', 1, inMid],
    ] as const) {
      const win = cost.windows[w];
      expect(win.length_s).toBeCloseTo(lengthS, 6);
      for (const [name, pick] of [
        ['total', (r: any) => member(r)],
        ['rt', (r: any) => member(r) && r.class === 'rt'],
        ['bulk', (r: any) => member(r) && r.class === 'bulk'],
      ] as const) {
        const f = name === 'total' ? win.total : win.classes[name];
        const h = byHand(rows.filter(pick), lengthS);
        expect(h.completed, `${w}/${name}`).toBeGreaterThan(0);
        expect(f.successful_requests).toBe(h.completed);
        expect(f.output_tokens).toBe(h.out);
        expect(f.input_tokens).toBe(h.inp);
        expect(f.output_tok_s).toBeCloseTo(h.outTokS, 2);
        expect(f.input_tok_s).toBeCloseTo(h.inTokS, 2);
        expect(f.output_tok_s_per_accelerator).toBeCloseTo(h.outTokS / ACCELERATORS, 2);
        expect(f.input_tok_s_per_accelerator).toBeCloseTo(h.inTokS / ACCELERATORS, 2);
        closeTo(f.usd_per_million_output_tokens, h.usdPerMOut, 1e-5);
        closeTo(f.usd_per_million_input_tokens, h.usdPerMIn, 1e-5);
        closeTo(f.output_tok_s_per_user, h.perUser, 1e-3);
        // The same count as the run's own throughput figure, and the same per-user rate as decode_tok_s_p50.
        if (name !== 'total') {
          expect(f.output_tok_s).toBeCloseTo(run.classes[name].windows[w].throughput_tok_s, 3);
          expect(f.output_tok_s_per_user).toBeCloseTo(run.classes[name].windows[w].decode_tok_s_p50, 3);
        }
      }
    }
    for (const key of [
      'cost',
      'cost.usd_per_hour',
      'cost.windows.<w>.total.usd_per_million_output_tokens',
      'cost.windows.<w>.total.output_tok_s_per_user',
    ])
      expect(run.field_definitions[key], key).toBeTruthy();
  });

  it('without a cost keeps the token rates and says why the dollar and per-accelerator figures are null', async () => {
    const work = tempDir();
    const { cost: _none, ...plan } = PLAN;
    const rt = { ...plan.classes[0]!, load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 1, rate_per_s: 12 }] } };
    const res = await runCoordinator([
      '--plan',
      writePlan(work, { ...plan, duration_s: 1, classes: [rt], windows: [] }),
      '--out',
      join(work, 'out'),
      '--quiet',
    ]);
    expect(res.code, res.stderr).toBe(0);
    const run = readRunJson(onlyRunDir(join(work, 'out')));
    const total = run.cost.windows.all.total;
    expect(total.output_tok_s).toBeGreaterThan(0);
    expect(total.output_tok_s_per_user).toBeGreaterThan(0);
    expect(total.output_tok_s_per_accelerator).toBeNull();
    expect(total.usd_per_million_output_tokens).toBeNull();
    expect(run.cost.null_reasons.usd_figures).toMatch(/no cost given/);
    expect(run.cost.null_reasons.per_accelerator_figures).toMatch(/no accelerator count/);
  });

  it('refuses a bad cost before any load, each problem with its JSON path', async () => {
    const work = tempDir();
    const { cost: _none, ...plan } = PLAN;
    const flag = await runCoordinator([
      '--plan',
      writePlan(work, plan),
      '--out',
      join(work, 'a'),
      '--quiet',
      '--cost-per-accelerator-hour',
      '2',
    ]);
    expect(flag.code).toBe(ExitCode.INVALID_INPUT);
    expect(flag.stderr).toContain('cost.accelerators: is required with usd_per_accelerator_hour');
    const bad = await runCoordinator([
      '--plan',
      writePlan(work, { ...plan, cost: { usd_per_hour: -1, accelerators: { type: 'H100', count: 0 } } }, 'bad.json'),
      '--out',
      join(work, 'b'),
      '--quiet',
    ]);
    expect(bad.code).toBe(ExitCode.INVALID_INPUT);
    expect(bad.stderr).toContain('cost.usd_per_hour: must be > 0');
    expect(bad.stderr).toContain('cost.accelerators.count: must be >= 1');
    const malformed = await runCoordinator([
      '--plan',
      writePlan(work, plan, 'ok.json'),
      '--out',
      join(work, 'c'),
      '--quiet',
      '--accelerators',
      'H100',
    ]);
    expect(malformed.code).toBe(ExitCode.INVALID_INPUT);
    expect(malformed.stderr).toMatch(/--accelerators.*TYPE:COUNT/);
  });
});

describe('the Pareto front of a sweep', () => {
  it('puts each stage on throughput per accelerator vs tokens/s per user, and the front is the non-dominated stages', async () => {
    const dir = tempDir();
    const file = writeSweep(dir, { strategy: { type: 'stages', values: [1, 2.5, 6] }, stage_duration_s: 5 });
    const done = await startNode('coordinator/main.js', [
      'sweep',
      file,
      '--agents',
      '2',
      '--out',
      join(dir, 'out'),
      '--quiet',
      ...SIM_ARGS,
      '--cost-per-accelerator-hour',
      '3',
      '--accelerators',
      'L4:2',
    ]).done;
    expect(done.code, done.stderr).not.toBe(ExitCode.INVALID_INPUT);
    const [name] = readdirSync(join(dir, 'out'));
    const s = JSON.parse(readFileSync(join(dir, 'out', name!, 'sweep.json'), 'utf8'));
    const measured = s.stages.filter((x: any) => x.verdict === 'pass' || x.verdict === 'fail');
    expect(measured.length, JSON.stringify(s.stages.map((x: any) => [x.value, x.verdict, x.reason]))).toBeGreaterThanOrEqual(2);
    for (const st of measured) {
      // The stage's figures are its run.json's over the measured window; check them against its requests.
      const run = readRunJson(st.run_dir);
      const rows = readRequests(st.run_dir);
      const start = run.started_at_unix_ns as bigint;
      const from = BigInt(Math.round(st.measure_window.start_s * 1e9));
      const to = BigInt(Math.round(st.measure_window.end_s * 1e9));
      const h = byHand(
        rows.filter((r: any) => r.intended_unix_ns - start >= from && r.intended_unix_ns - start < to),
        st.measure_window.end_s - st.measure_window.start_s,
      );
      expect(st.cost.output_tok_s).toBeCloseTo(h.outTokS, 2);
      expect(st.cost.output_tok_s_per_accelerator).toBeCloseTo(h.outTokS / 2, 2);
      closeTo(st.cost.output_tok_s_per_user, h.perUser, 1e-3);
      // 3 $/accelerator-hour × 2 accelerators = 6 $/hour.
      closeTo(st.cost.usd_per_million_output_tokens, (6 / (h.outTokS * 3600)) * 1e6, 1e-5);
    }
    // The front, recomputed here: a stage is on it when no other is at least as good on both axes and better on one.
    const pts = s.pareto.points;
    expect(s.pareto).toMatchObject({ x: 'output_tok_s_per_user', y: 'output_tok_s_per_accelerator' });
    expect(pts).toHaveLength(measured.length);
    const beaten = (p: any) => pts.some((q: any) => q.x >= p.x && q.y >= p.y && (q.x > p.x || q.y > p.y));
    const front = pts.filter((p: any) => !beaten(p)).sort((a: any, b: any) => a.x - b.x);
    expect(s.pareto.front).toEqual(front.map((p: any) => p.label));
    for (const p of pts) {
      const st = measured.find((x: any) => `${x.value} req/s${x.measurement > 1 ? ` (#${x.measurement})` : ''}` === p.label);
      expect(p.meets_slo).toBe(st.verdict === 'pass');
      expect(p.x).toBe(st.cost.output_tok_s_per_user);
      expect(p.y).toBe(st.cost.output_tok_s_per_accelerator);
    }
    const html = readFileSync(join(dir, 'out', name!, 'report.html'), 'utf8');
    expect(html).toContain('data-chart="sweep-pareto"');
    expect(html.match(/<g class="point" /g)).toHaveLength(pts.length);
    console.log(
      `sweep Pareto: ${pts.map((p: any) => `${p.label} → ${p.x} tok/s/user, ${p.y} tok/s/accelerator (${p.meets_slo ? 'met' : 'missed'})`).join('; ')}; front ${s.pareto.front.join(', ')}`,
    );
  });
});
