// One round of the mixed-fault soak: a real coordinator, three agents each behind a chaos proxy
// (test/hosts/blackhole-proxy.ts: the link closed, or blackholed one way, at seeded moments), one
// agent SIGKILLed at a seeded moment of the load and restarted with the same id and spool (it
// uploads what it spooled), and engine-sim answering some requests slowly or with errors (429,
// 5xx, a reset connection). What must hold, and what the round returns for the soak to judge:
//   - every request index at most once in requests.ndjson (duplicates: resends the coordinator dropped);
//   - every request the killed agent had spooled when it was killed is in the run (its records the
//     coordinator acknowledged were spooled before they were sent, so none of them is lost);
//   - every planned request of an agent that was not killed is in the run (cut links lose nothing);
//   - a missing request is one of the killed agent's, planned after it was killed.
// The coordinator is SIGKILLed too, at a seeded moment (COORDINATOR_KILLS), and restarted with
// `coordinator resume RUN_DIR`; the agents stand (--stay) and rejoin within their grace. Then also:
//   - every request in any agent's spool when the coordinator was killed is in the run (what an
//     agent had measured, acknowledged or not; after its final was acknowledged, its requests are
//     the journal's alone, and the survivors' planned requests above cover them);
//   - run.json says the run was recovered from its journal, with the outage.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ownsOrdinal } from '../../shared/shares.js';
import { constantRatePlan, distPath, freePort, readRequests, readRunJson, startNode, tempDir, waitFor, writePlan } from '../harness.js';

/**
 * Where a round kills its coordinator: during the load (at a seeded second); in the drain, as the
 * first agent's `final` reaches the journal (the agents have sent their last records, no final is
 * acknowledged); just after the last `final` was made durable and acknowledged; or while the run
 * directory is written (renaming requests.ndjson into place).
 */
export const COORDINATOR_KILLS = ['mid-load', 'drain', 'after-final', 'dir-write'] as const;
export type CoordinatorKill = (typeof COORDINATOR_KILLS)[number];

/** What one round did and found. */
export interface RoundResult {
  seed: number;
  loadS: number;
  planned: number;
  rows: number;
  linkFaults: string[];
  /** Where the coordinator was to be killed, and whether it was (a moment the run never reached is not). */
  coordinatorKill: CoordinatorKill;
  coordinatorKilled: boolean;
  /** Seconds from the start of the load to the coordinator's kill (its moment, when the round chose it by time). */
  coordinatorKilledAtS: number | null;
  /** Requests in any agent's spool when the coordinator was killed (each must be in the run). */
  spooledAtCoordinatorKill: number;
  /** Of those, how many are not in the run. */
  spooledAtCoordinatorKillLost: number;
  /** run.json recovered: what the resumed coordinator says of the outage (null when not recovered). */
  recovered: { down_from_s: number; restarted_at_s: number; during_load: boolean; replayed_messages: number } | null;
  /** Outages the agents recorded for the coordinator stopping. */
  coordinatorOutages: number;
  resumedCode: number | null;
  resumedLog: string;
  killed: string;
  killedAtS: number;
  /** Requests in the killed agent's spool when it was killed (each must be in the run). */
  spooledAtKill: number;
  /** Of those, how many are not in the run. */
  spooledLost: number;
  /** Request indices in requests.ndjson more than once. */
  duplicates: number;
  /** Planned requests of agents not killed that are not in the run. */
  survivorsMissing: number;
  /** Missing requests that were not the killed agent's. */
  unexplainedMissing: number;
  /** Rows the target answered with an error (429, 5xx, reset) or slowly past the timeout. */
  targetErrors: number;
  /** run.json duplicates_dropped: records that arrived a second time (resent after a cut, or in the restarted agent's spool upload) and were not counted again. */
  duplicatesDropped: number;
  /** run.json intervals.duplicates: intervals resent after a reconnect and dropped. */
  intervalDuplicates: number;
  status: string;
  statusReason: string;
  coordinatorCode: number | null;
  agentCodes: (number | null)[];
  wallS: number;
}

const TOKEN = { LOADFLEET_TOKEN: 'soak-token', LOADFLEET_COORDINATOR_WAIT_S: '60' };
const IDS = ['s1', 's2', 's3'];
const RATE = 10;

// mulberry32, as the chaos proxy's: a round replays from its seed.
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Spooled request indices in the spool files of `agentId` in `dir` (a torn last line is no request). */
function spooledIndices(dir: string, agentId: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync(dir).filter((n) => n.startsWith(`${agentId}.`) && n.endsWith('.spool.ndjson'))) {
    const lines = readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean).slice(1);
    for (const line of lines) {
      try {
        out.push((JSON.parse(line) as { record: { request_index: number } }).record.request_index);
      } catch {
        // the line the kill cut
      }
    }
  }
  return out;
}

/** Runs one round of `loadS` seconds of load; `linkFaults` per agent. */
export async function soakRound(
  seed: number,
  loadS: number,
  linkFaultsPerAgent: number,
  coordinatorKillAt?: CoordinatorKill,
): Promise<RoundResult> {
  const began = Date.now();
  const next = rng(seed);
  const dir = tempDir('loadfleet-soak-');
  const plan = constantRatePlan(`soak${seed}`, loadS, RATE, { input_tokens: 16, output_tokens: 16 });
  // A slow and erroring target: 3% 429, 3% 5xx, 2% reset connections, 5% stalled 400 ms mid-stream.
  const simPort = await freePort();
  const sim = startNode('sim/main.js', [
    '--port',
    String(simPort),
    '--ttft-ms',
    '10',
    '--itl-ms',
    '4',
    '--fault',
    '429-rate=0.03',
    '--fault',
    '5xx-rate=0.03',
    '--fault',
    'reset-rate=0.02',
    '--fault',
    'stall-rate=0.05',
    '--fault',
    'stall-ms=400',
    '--fault-seed',
    String(seed),
  ]);
  await waitFor(sim.child.stdout!, /./);
  plan.target = { base_url: `http://127.0.0.1:${simPort}/v1`, api: 'chat', model: 'loadfleet-sim', timeout_s: 5 };
  // Drawn after the agent kill's draws, so a seed kills the same agent at the same moment as before.
  const agentDraws = [next(), next()];
  const coordinatorKill = coordinatorKillAt ?? COORDINATOR_KILLS[Math.floor(next() * COORDINATOR_KILLS.length)]!;
  const coordKillAtS = Math.round((0.2 + next() * 0.6) * loadS * 10) / 10;
  const hook = (file: string, env: Record<string, string>): Record<string, string> => ({
    NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import ${distPath(`test/hosts/${file}`)}`].filter(Boolean).join(' '),
    ...env,
  });
  const coordHooks: Record<CoordinatorKill, Record<string, string>> = {
    'mid-load': {},
    // The restarted agent's upload ends with a final (it is restarted 25–75% into the load, so its
    // final comes first); the second final is the first surviving agent's, at the end of its load.
    drain: hook('crash-at-final.js', { LOADFLEET_TEST_CRASH_AT_FINAL: '2' }),
    // The restarted agent's upload and the two surviving agents' finals: the third is the last.
    'after-final': hook('crash-at-final.js', { LOADFLEET_TEST_CRASH_AFTER_FINAL: '3' }),
    'dir-write': hook('crash-at-rename.js', { LOADFLEET_TEST_CRASH_AT_RENAME: 'requests.ndjson' }),
  };
  const coord = startNode(
    'coordinator/main.js',
    [
      'start',
      '--agents',
      '3',
      '--plan',
      writePlan(dir, plan),
      '--out',
      join(dir, 'out'),
      '--listen',
      '127.0.0.1:0',
      '--agent-grace-s',
      '20',
      // The killed agent counts as lost (its share is short); the run goes on.
      '--max-agent-loss',
      '1',
    ],
    { ...TOKEN, ...coordHooks[coordinatorKill] },
  );
  const [, url] = await waitFor(coord.child.stderr!, /waiting for \d+ agent\(s\) at (ws:\/\/[\d.:]+)/);
  const upstream = new URL(url!);
  const proxies = await Promise.all(
    IDS.map(async (_, i) => {
      const port = await freePort();
      // Link faults from 10 s after the agent first connects (the load has begun: joining and the
      // clock probes take 5–8 s) to about its planned end.
      const chaos = `chaos:${seed * 10 + i}:${linkFaultsPerAgent}:10000:${(loadS + 5) * 1000}`;
      const p = startNode('test/hosts/blackhole-proxy.js', [String(port), upstream.hostname, upstream.port, 'up', chaos]);
      await waitFor(p.child.stdout!, /proxy listening/);
      return { p, port };
    }),
  );
  const linkFaults: string[] = [];
  for (const [i, { p }] of proxies.entries())
    p.child.stdout!.on('data', (c: Buffer) => {
      for (const l of c.toString().split('\n')) if (l.startsWith('chaos')) linkFaults.push(`${IDS[i]}: ${l}`);
    });
  const spool = (id: string): string => join(dir, `spool-${id}`);
  const agent = (id: string, i: number) =>
    startNode(
      'agent/main.js',
      // Standing, so an agent outlives a coordinator killed after its final was acknowledged.
      ['--coordinator', `ws://127.0.0.1:${proxies[i]!.port}`, '--id', id, '--spool-dir', spool(id), '--stay'],
      TOKEN,
    );
  const agents = IDS.map((id, i) => agent(id, i));

  // The agent killed, and when: 25–75% into the load.
  const k = Math.floor(agentDraws[0]! * IDS.length);
  const killed = IDS[k]!;
  const killedAtS = Math.round((0.25 + agentDraws[1]! * 0.5) * loadS * 10) / 10;
  const [, startIn, unit] = await waitFor(coord.child.stderr!, /agents armed; start in ([\d.]+) (ms|s)\b/, 120_000);
  const startMs = Date.now() + Number(startIn) * (unit === 's' ? 1000 : 1);
  const sleepUntil = (ms: number) => new Promise((r) => setTimeout(r, ms - Date.now()));
  let restarted: ReturnType<typeof agent> | undefined;
  let spooled: number[] = [];
  const agentKill = (async () => {
    await sleepUntil(startMs + killedAtS * 1000);
    agents[k]!.child.kill('SIGKILL');
    await agents[k]!.done;
    spooled = spooledIndices(spool(killed), killed);
    await new Promise((r) => setTimeout(r, 500));
    restarted = agent(killed, k);
  })();
  if (coordinatorKill === 'mid-load') void sleepUntil(startMs + coordKillAtS * 1000).then(() => coord.child.kill('SIGKILL'));
  const first = await coord.done;
  const coordinatorKilled = first.code === null;
  const coordinatorKilledAtS = coordinatorKilled ? Math.round((Date.now() - startMs) / 100) / 10 : null;
  // What every agent had measured when its coordinator went: all of it must be in the run.
  const spooledAtCoordKill = coordinatorKilled ? IDS.flatMap((id) => spooledIndices(spool(id), id)) : [];
  const out = join(dir, 'out');
  const runDir = join(out, readdirSync(out)[0]!);
  const resumed = coordinatorKilled ? await startNode('coordinator/main.js', ['resume', runDir], TOKEN).done : null;
  await agentKill;
  // The coordinator released the agents; standing, they wait for the next run: stop them.
  const standing = [...agents.filter((_, i) => i !== k), restarted!];
  for (const a of standing) a.child.kill('SIGTERM');
  const res = resumed ?? first;
  const done = await Promise.all(standing.map((a) => a.done));
  for (const { p } of proxies) p.child.kill('SIGKILL');
  sim.child.kill('SIGTERM');
  const run = readRunJson(runDir);
  const rows = readRequests(runDir);
  const planned = loadS * RATE;
  const seen = new Map<number, number>();
  for (const r of rows) seen.set(r.request_index, (seen.get(r.request_index) ?? 0) + 1);
  const shareOf = (id: string): { index: number; count: number } => {
    const a = run.agents.find((x: { agent_id: string }) => x.agent_id === id);
    const [from] = a.segment as [string, string];
    const [index, count] = from.split('/').map(Number) as [number, number];
    return { index, count };
  };
  let survivorsMissing = 0;
  let unexplainedMissing = 0;
  const killedShare = shareOf(killed);
  for (let i = 0; i < planned; i++) {
    if (seen.has(i)) continue;
    if (!ownsOrdinal(i, killedShare, 0)) unexplainedMissing++;
    for (const id of IDS) if (id !== killed && ownsOrdinal(i, shareOf(id), 0)) survivorsMissing++;
  }
  return {
    seed,
    loadS,
    planned,
    rows: rows.length,
    linkFaults,
    coordinatorKill,
    coordinatorKilled,
    coordinatorKilledAtS: coordinatorKill === 'mid-load' && coordinatorKilled ? coordKillAtS : coordinatorKilledAtS,
    spooledAtCoordinatorKill: spooledAtCoordKill.length,
    spooledAtCoordinatorKillLost: spooledAtCoordKill.filter((i) => !seen.has(i)).length,
    recovered: run.recovered ?? null,
    coordinatorOutages: run.agents.reduce(
      (n: number, a: { outages?: { reason: string }[] }) =>
        n + (a.outages ?? []).filter((o) => o.reason === 'the coordinator stopped').length,
      0,
    ),
    resumedCode: resumed?.code ?? null,
    resumedLog: resumed
      ? resumed.stderr
          .split('\n')
          .filter((l) => /recovered|every agent/.test(l))
          .join(' | ')
      : '',
    killed,
    killedAtS,
    spooledAtKill: spooled.length,
    spooledLost: spooled.filter((i) => !seen.has(i)).length,
    duplicates: [...seen.values()].filter((n) => n > 1).length,
    survivorsMissing,
    unexplainedMissing,
    targetErrors: rows.filter((r) => r.status !== 'ok').length,
    duplicatesDropped: Number(run.duplicates_dropped ?? 0),
    intervalDuplicates: Number(run.intervals?.duplicates ?? 0),
    status: run.status,
    statusReason: run.status_reason,
    coordinatorCode: res.code,
    agentCodes: done.map((d) => d.code),
    wallS: Math.round((Date.now() - began) / 100) / 10,
  };
}
