// A local fleet larger than the free cores runs packed: fewer agent processes, each
// serving several agents, and every agent still an agent of its own — its own share, records,
// status and figures in run.json — with the layout stated there.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../shared/errors.js';
import {
  constantRatePlan,
  listeningCoordinator,
  onlyRunDir,
  readRequests,
  readRunJson,
  runPlanToEnd,
  startNode,
  tempDir,
  waitFor,
  writePlan,
} from './harness.js';

const PLAN = constantRatePlan('packed', 2, 20, { input_tokens: 16, output_tokens: 8 });
// Stated free cores: the machine's measured ones depend on whatever else runs.
const FLAGS = ['--agents', '4', '--free-cores', '2', '--agent-arg=--self-test=skip', '--headroom', 'off'];

describe('local layout', () => {
  it('packs 4 agents on 2 free cores into 2 processes, each agent reported with its own records', async () => {
    const { run, rows } = await runPlanToEnd(PLAN, FLAGS);
    expect(run.status, run.status_reason).not.toBe('failed');
    expect(run.local_layout).toMatchObject({
      mode: 'auto',
      chosen: 'packed',
      free_cores: 2,
      agents: 4,
      processes: 2,
      agent_threads: 2,
      groups: [
        ['agent-1', 'agent-2'],
        ['agent-3', 'agent-4'],
      ],
    });
    expect(run.field_definitions.local_layout).toMatch(/packed/);
    const byId = new Map<string, any>(run.agents.map((a: any) => [a.agent_id, a]));
    expect([...byId.keys()].sort()).toEqual(['agent-1', 'agent-2', 'agent-3', 'agent-4']);
    // Which agents shared a process comes from their hellos (host, pid, process epoch), and matches the layout.
    const shared = run.shared_processes.map((p: { agents: string[] }) => [...p.agents].sort());
    expect(shared.sort()).toEqual([
      ['agent-1', 'agent-2'],
      ['agent-3', 'agent-4'],
    ]);
    expect(new Set(run.shared_processes.map((p: { pid: number }) => p.pid)).size).toBe(2);
    for (const a of run.agents) expect(a.process_agents, a.agent_id).toBe(2);
    // Every agent ran its own share: its own requests, rows and status, and together the whole schedule once.
    for (const a of run.agents) {
      expect(a.status, a.agent_id).toBe('ok');
      expect(a.requests, a.agent_id).toBeGreaterThan(0);
      expect(rows.filter((r) => r.agent_id === a.agent_id)).toHaveLength(a.requests);
      expect(a.first_send_error_ns, a.agent_id).not.toBeNull();
    }
    expect(run.agents.reduce((n: number, a: any) => n + a.requests, 0)).toBe(40);
    expect(rows).toHaveLength(40);
    expect(new Set(rows.map((r) => r.request_index)).size).toBe(40);
    expect(run.offered_schedule_matches).toBe(true);
    // The dry run says the same layout before any run.
    const dry = await startNode('coordinator/main.js', [
      'plan',
      writePlan(tempDir(), PLAN),
      '--agents',
      '4',
      '--local',
      '--free-cores',
      '2',
      '--self-test',
      'skip',
      '--json',
    ]).done;
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout).local_layout.groups).toEqual(run.local_layout.groups);
  }, 120_000);

  it('--local-layout process-per-agent gives each agent its own process', async () => {
    const { run, rows } = await runPlanToEnd(PLAN, [...FLAGS, '--local-layout', 'process-per-agent']);
    expect(run.local_layout).toMatchObject({ mode: 'process-per-agent', chosen: 'process-per-agent', processes: 4, agent_threads: 4 });
    expect(run.shared_processes).toEqual([]);
    for (const a of run.agents) expect(a.process_agents, a.agent_id).toBe(1);
    expect(rows).toHaveLength(40);
  }, 120_000);

  it('a packed process stopped mid-run (SIGTERM) hands over each of its agents, counted lost one by one', async () => {
    const work = tempDir();
    const env = { LOADFLEET_TOKEN: 'packed-sigterm' };
    const { coord, url } = await listeningCoordinator(
      [
        '--agents',
        '3',
        '--max-agent-loss',
        '2',
        '--plan',
        writePlan(work, constantRatePlan('packed-sigterm', 6, 30)),
        '--out',
        join(work, 'out'),
      ],
      env,
    );
    const spool = (name: string) => join(work, `spool-${name}`);
    const keeps = startNode('agent/main.js', ['--coordinator', url, '--id', 'keeps', '--spool-dir', spool('keeps')], env);
    const packed = startNode(
      'agent/main.js',
      ['--coordinator', url, '--id', 'leaves-a', '--id', 'leaves-b', '--spool-dir', spool('packed')],
      env,
    );
    await waitFor(coord.child.stderr!, /t=2s/);
    packed.child.kill('SIGTERM');
    const left = await packed.done;
    expect(left.code, left.stderr).toBe(ExitCode.INTERRUPTED);
    expect(left.stderr).toMatch(/handed over 2 runs; exiting/);
    expect(readdirSync(spool('packed')).filter((n) => n.endsWith('.spool.ndjson'))).toEqual([]);
    const [kept, res] = await Promise.all([keeps.done, coord.done]);
    expect(kept.code, kept.stderr).toBe(0);
    expect(res.code, res.stderr).toBe(0);
    const dir = onlyRunDir(join(work, 'out'));
    const run = readRunJson(dir);
    const rows = readRequests(dir);
    expect(run.status).toBe('degraded');
    // Not spawned by this coordinator: no local layout, but which agents shared a process still shows.
    expect(run.local_layout).toBeNull();
    for (const id of ['leaves-a', 'leaves-b']) {
      expect(run.status_reason).toMatch(
        new RegExp(`agent ${id} was lost \\(the agent was terminated \\(SIGTERM\\); it handed over its \\d+ requests\\)`),
      );
      const a = run.agents.find((x: { agent_id: string }) => x.agent_id === id);
      expect(a.status).toBe('lost');
      expect(a.process_agents).toBe(2);
      const its = rows.filter((r) => r.agent_id === id);
      expect(its.length).toBeGreaterThan(10);
      expect(its.length).toBe(a.requests);
      expect(new Set(its.map((r) => r.request_index)).size).toBe(its.length);
    }
    expect(run.agents.find((x: { agent_id: string }) => x.agent_id === 'keeps').process_agents).toBe(1);
    expect(run.shared_processes.map((p: { agents: string[] }) => [...p.agents].sort())).toEqual([['leaves-a', 'leaves-b']]);
    // The agent in its own process ran its whole share: 6 s at 10/s.
    expect(rows.filter((r) => r.agent_id === 'keeps' && r.status === 'ok').length).toBe(60);
  }, 60_000);
});
