// End to end: sampled records (`--records sampled:K`, plan.records.sample_every) with real agent
// processes against engine-sim. The agents send every K-th request of their share and keep every
// record in their spools; the coordinator's counts, goodput and SLO verdicts are those of every
// request (the agents' tallies and merged histograms), run.json says what was sampled and what is
// not evaluable, and a plan whose figures need every record is refused.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../shared/errors.js';
import { constantRatePlan, onlyRunDir, readRequests, readRunJson, runCoordinator, tempDir, writePlan } from './harness.js';

// The simple engine answers its first token after 60 ms: a 20 ms TTFT bound is missed, 2 s is met.
const SIM = ['--sim-arg=--engine=simple', '--sim-arg=--ttft-ms=60', '--sim-arg=--itl-ms=2'];
const AGENTS = 2;
const K = 5;
const RATE = 20;
const SECONDS = 3;

function plan(ttftBoundMs: number) {
  const p = constantRatePlan('sampled-records', SECONDS, RATE);
  p.classes[0]!.slo = { ttft_p95_ms: ttftBoundMs, success_rate_min: 0.99 };
  p.windows = [{ name: 'middle', start_s: 1, end_s: 2 }];
  return p;
}

async function sampledRun(work: string, name: string, ttftBoundMs: number, agentArgs: string[] = []) {
  const spool = join(work, `spool-${name}`);
  const out = join(work, name);
  const r = await runCoordinator([
    ...['--plan', writePlan(work, plan(ttftBoundMs), `${name}.json`), '--out', out, '--quiet'],
    ...['--agents', String(AGENTS), '--records', `sampled:${K}`, `--agent-arg=--spool-dir=${spool}`, ...agentArgs],
    ...SIM,
  ]);
  expect(r.code, r.stderr).toBe(ExitCode.OK);
  const dir = onlyRunDir(out);
  return { run: readRunJson(dir), rows: readRequests(dir), spool, stdout: r.stdout };
}

describe('--records sampled:K', () => {
  it('sends a sample, keeps every record, and judges every request from tallies and histograms', async () => {
    const work = tempDir();
    const total = SECONDS * RATE;
    const { run, rows, spool, stdout } = await sampledRun(work, 'missed', 20);

    // Fewer records over the wire: exactly those with floor(index / agents) mod K = 0.
    const expected = Array.from({ length: total }, (_, i) => i).filter((i) => Math.floor(i / AGENTS) % K === 0);
    expect(rows.map((r) => Number(r.request_index)).sort((a, b) => a - b)).toEqual(expected);
    expect(run.records).toMatchObject({ sent: 'sampled', sample_every: K, received: expected.length });
    expect(run.plan.records).toEqual({ sample_every: K });
    expect(run.field_definitions['records.sample_every']).toMatch(/floor\(request_index \/ agents\) mod K = 0/);

    // Counts are of every request (the agents' own tallies), not of the sample.
    expect(run.requests).toBe(total);
    expect(run.classes.rt).toMatchObject({ requests: total, completed: total, failed: 0 });
    expect(run.classes.rt.windows.all.requests).toBe(total);
    expect(run.agents.map((a: { requests: number }) => a.requests)).toEqual([total / AGENTS, total / AGENTS]);

    // The verdict's p95 comes from the merged histogram of every request: the window's own p95.
    const v = run.classes.rt.slo_verdict;
    expect(v.verdict).toBe('missed');
    const crit = v.windows.all.criteria[0];
    expect(crit).toMatchObject({ criterion: 'ttft_p95_ms', met: false, ranked: total, failed: 0 });
    expect(crit.figure).toBeCloseTo(run.classes.rt.windows.all.ttft_p95_ms, 2);
    expect(stdout).toMatch(/rt: SLO MISSED/);

    // What a sample cannot give is stated, not guessed.
    expect(run.offered_schedule_matches).toBeNull();
    const kept = run.data_quality.checks.find((c: { name: string }) => c.name === 'schedule_kept');
    expect(kept.evidence.offered_schedule_not_evaluable).toMatch(/sampled \(1 in 5\)/);
    expect(kept.evidence.classes.rt.dispatched).toBe(total);
    expect(run.histograms.max_relative_error_vs_exact).toBeNull();
    expect(run.records.not_evaluable.join(' ')).toMatch(/offered_schedule_sha256/);

    // Every record stays with the agents: their kept spools hold all of them, once.
    const files = readdirSync(spool).filter((n) => n.endsWith('.records.ndjson'));
    expect(files).toHaveLength(AGENTS);
    const spooled = files.flatMap((f) =>
      readFileSync(join(spool, f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .slice(1) // the header line
        .map((l) => JSON.parse(l).record.request_index as number),
    );
    expect(spooled.sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i));
    expect(readdirSync(spool).filter((n) => n.endsWith('.spool.ndjson'))).toEqual([]);

    // A met SLO, each agent on two worker threads: the same sample (the stride is the fleet's, not
    // the threads'), the threads' tallies added, goodput of every request.
    const met = await sampledRun(work, 'met', 2000, ['--agent-arg=--workers=2']);
    expect(met.run.agents.map((a: { workers: number }) => a.workers)).toEqual([2, 2]);
    expect(met.rows.map((r) => Number(r.request_index)).sort((a, b) => a - b)).toEqual(expected);
    expect(met.run.classes.rt).toMatchObject({ requests: total, completed: total });
    expect(met.run.classes.rt.slo_verdict.verdict).toBe('met');
    expect(met.run.classes.rt.windows.all.goodput_requests).toBe(total);
    const metKept = readdirSync(met.spool).filter((n) => n.endsWith('.records.ndjson'));
    expect(metKept.length).toBeGreaterThanOrEqual(AGENTS);
  }, 120_000);

  it('refuses a plan whose figures need every record', async () => {
    const work = tempDir();
    const p = plan(2000);
    p.abort = { error_share_above: 0.5, for_s: 1 };
    const r = await runCoordinator([
      '--plan',
      writePlan(work, p),
      '--out',
      join(work, 'out'),
      '--quiet',
      '--records',
      'sampled:10',
      ...SIM,
    ]);
    expect(r.code).toBe(ExitCode.INVALID_INPUT);
    expect(r.stderr).toMatch(/records.*cannot be sampled with abort rules/);
  }, 60_000);
});
