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
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ownsOrdinal } from '../../shared/shares.js';
import { constantRatePlan, freePort, readRequests, readRunJson, startNode, tempDir, waitFor, writePlan } from '../harness.js';

/** What one round did and found. */
export interface RoundResult {
  seed: number;
  loadS: number;
  planned: number;
  rows: number;
  linkFaults: string[];
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
export async function soakRound(seed: number, loadS: number, linkFaultsPerAgent: number): Promise<RoundResult> {
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
    TOKEN,
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
    startNode('agent/main.js', ['--coordinator', `ws://127.0.0.1:${proxies[i]!.port}`, '--id', id, '--spool-dir', spool(id)], TOKEN);
  const agents = IDS.map((id, i) => agent(id, i));

  // The agent killed, and when: 25–75% into the load.
  const k = Math.floor(next() * IDS.length);
  const killed = IDS[k]!;
  const killedAtS = Math.round((0.25 + next() * 0.5) * loadS * 10) / 10;
  const [, startIn, unit] = await waitFor(coord.child.stderr!, /agents armed; start in ([\d.]+) (ms|s)\b/, 120_000);
  const startMs = Date.now() + Number(startIn) * (unit === 's' ? 1000 : 1);
  await new Promise((r) => setTimeout(r, startMs + killedAtS * 1000 - Date.now()));
  agents[k]!.child.kill('SIGKILL');
  await agents[k]!.done;
  const spooled = spooledIndices(spool(killed), killed);
  await new Promise((r) => setTimeout(r, 500));
  const restarted = agent(killed, k);

  const [res, ...done] = await Promise.all([coord.done, ...agents.filter((_, i) => i !== k).map((a) => a.done), restarted.done]);
  for (const { p } of proxies) p.child.kill('SIGKILL');
  sim.child.kill('SIGTERM');
  const out = join(dir, 'out');
  const runs = readdirSync(out);
  const runDir = join(out, runs[0]!);
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
