// suite: timing
// The coordinator survives its own crash: a coordinator SIGKILLed mid-run, two standing (--stay)
// agents against engine-sim keeping their load going, and a coordinator restarted on the run —
// `coordinator resume RUN_DIR`, or the same `coordinator start` command on the same --out — takes
// the run up from its journal; the agents rejoin within their grace and resend what was not
// durable. Every planned request is in requests.ndjson exactly once and run.json says recovered.
// Killed in the drain (the first final not yet durable) or while the run directory is written, the
// run is whole as well. A run directory whose journal is gone cannot be recovered: the error says where the spools are.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Plan } from '../shared/plan.js';
import {
  constantRatePlan,
  distPath,
  listeningCoordinator,
  readRequests,
  readRunJson,
  startNode,
  startSim,
  tempDir,
  waitFor,
  writePlan,
} from './harness.js';

const TOKEN = { LOADFLEET_TOKEN: 'resume-token' };
const DURATION_S = 12;
const RATE = 20;

describe('a coordinator killed mid-run', () => {
  const stops: (() => void)[] = [];
  afterAll(() => {
    for (const s of stops) s();
  });

  // Runs the plan on two --stay agents, SIGKILLs the coordinator once it logs `killAt`, restarts it
  // with `restart` and returns the run directory and the restarted coordinator's output.
  async function killAndRestart(
    killAt: RegExp | null,
    restart: (runDir: string, args: string[]) => string[],
    env: Record<string, string> = {},
  ) {
    const work = tempDir();
    const sim = await startSim(['--ttft-ms', '10', '--itl-ms', '4']);
    stops.push(sim.stop);
    const plan: Plan = {
      ...constantRatePlan('resume', DURATION_S, RATE),
      target: { base_url: sim.baseUrl, api: 'chat', model: 'loadfleet-sim', timeout_s: 10 },
    };
    const out = join(work, 'out');
    const args = ['--agents', '2', '--agent-grace-s', '30', '--plan', writePlan(work, plan), '--out', out];
    const { coord, url } = await listeningCoordinator(args, { ...TOKEN, ...env });
    const agents = ['s1', 's2'].map((id) =>
      startNode('agent/main.js', ['--coordinator', url, '--id', id, '--spool-dir', join(work, 'spool'), '--stay'], TOKEN),
    );
    for (const a of agents) stops.push(() => a.child.kill('SIGTERM'));
    if (killAt) {
      await waitFor(coord.child.stderr!, killAt, 60_000);
      coord.child.kill('SIGKILL');
    }
    expect((await coord.done).code).toBeNull(); // killed, not exited
    const runDir = join(out, readdirSync(out)[0]!);
    expect(existsSync(join(runDir, 'journal', 'run.journal'))).toBe(true);
    const port = new URL(url).port;
    const again = startNode('coordinator/main.js', restart(runDir, [...args, '--listen', `127.0.0.1:${port}`]), TOKEN);
    const res = await again.done;
    for (const a of agents) a.child.kill('SIGTERM');
    await Promise.all(agents.map((a) => a.done));
    return { runDir, res, spool: join(work, 'spool') };
  }

  function expectEveryRequestOnce(runDir: string, outage = true): any {
    const rows = readRequests(runDir);
    const indices = rows.map((r) => Number(r.request_index)).sort((a, b) => a - b);
    expect(indices).toEqual(Array.from({ length: DURATION_S * RATE }, (_, i) => i));
    const run = readRunJson(runDir);
    expect(run.requests).toBe(DURATION_S * RATE);
    expect(run.recovered).toBeDefined();
    expect(run.field_definitions['recovered.down_from_s']).toBeTruthy();
    expect(run.status_reason).toContain('was recovered from its journal');
    // Both agents were held through the outage and came back to their run.
    if (outage) for (const a of run.agents) expect(a.outages.at(-1)).toMatchObject({ reason: 'the coordinator stopped', resumed: true });
    else for (const a of run.agents) expect(a.outages).toEqual([]);
    expect(existsSync(join(runDir, 'journal'))).toBe(false);
    return run;
  }

  it('coordinator resume RUN_DIR: every planned request once, marked recovered with the outage in the load window', async () => {
    const { runDir, res } = await killAndRestart(/t=4s/, (dir) => ['resume', dir]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/recovered run \S+ from its journal: \d+ messages replayed/);
    const run = expectEveryRequestOnce(runDir);
    expect(run.recovered.during_load).toBe(true);
    expect(run.recovered.replayed_messages).toBeGreaterThan(0);
    expect(run.recovered.restarted_at_s).toBeGreaterThanOrEqual(run.recovered.down_from_s);
  }, 120_000);

  it('the same coordinator start command on the same --out completes the unfinished run instead of starting another', async () => {
    const { runDir, res } = await killAndRestart(/t=8s/, (_dir, args) => ['start', ...args]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain('was not finished (its journal is there): recovering it instead of starting a new run');
    expect(readdirSync(join(runDir, '..'))).toHaveLength(1);
    const run = expectEveryRequestOnce(runDir);
    expect(run.recovered.down_from_s).toBeGreaterThan(4);
  }, 120_000);

  it('killed in the drain, as the first final reaches its journal (the agents sent their last records; no final acknowledged): both agents hold their spools and hand them over', async () => {
    const crash = {
      NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import ${distPath('test/hosts/crash-at-final.js')}`].filter(Boolean).join(' '),
      LOADFLEET_TEST_CRASH_AT_FINAL: '1',
    };
    const { runDir, res } = await killAndRestart(null, (dir) => ['resume', dir], crash);
    expect(res.code, res.stderr).toBe(0);
    const run = expectEveryRequestOnce(runDir);
    // The moment was the end of the load: each agent's last planned request goes out in its last 0.1 s.
    expect(run.recovered.down_from_s).toBeGreaterThanOrEqual(DURATION_S - 1);
  }, 120_000);

  it('killed while writing the run directory, after every final was acknowledged (the agents deleted their spools): the run is written from the journal alone', async () => {
    const crash = {
      NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import ${distPath('test/hosts/crash-at-rename.js')}`].filter(Boolean).join(' '),
      LOADFLEET_TEST_CRASH_AT_RENAME: 'requests.ndjson',
    };
    const { runDir, res, spool } = await killAndRestart(null, (dir) => ['resume', dir], crash);
    expect(res.code, res.stderr).toBe(0);
    // Handed over before the crash: no agent holds a copy; the records were in the journal alone.
    expect(readdirSync(spool).filter((n) => n.includes('.spool.ndjson'))).toEqual([]);
    expect(res.stderr).toContain('every agent had handed over');
    const run = expectEveryRequestOnce(runDir, false);
    expect(run.recovered.during_load).toBe(false);
  }, 120_000);

  it('a run directory without its journal: exit 2, and where each agent keeps the run in its spool', async () => {
    const dir = join(tempDir(), '20261204T000000Z-gone-0000');
    const res = await startNode('coordinator/main.js', ['resume', dir], TOKEN).done;
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('error LF_JOURNAL_UNREADABLE: cannot recover');
    expect(res.stderr).toContain('20261204T000000Z-gone-0000*.spool.ndjson');
    rmSync(dir, { recursive: true, force: true });
  });
});
