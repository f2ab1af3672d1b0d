// The crash matrix: a coordinator running a plan against its embedded engine-sim, with two standing
// (--stay) agents, is killed at a named failpoint (LOADFLEET_FAILPOINTS) or SIGKILLed with its
// process group at a seeded random instant, then restarted — the same `coordinator start` on the
// same --out, or `coordinator resume RUN_DIR` — possibly killed again while it recovers, until a
// restart completes. After every kill: every sequence number an agent heard acknowledged
// (LOADFLEET_ACK_AUDIT_DIR) is in the journal left on disk. At the end: every planned request is in
// requests.ndjson exactly once, the embedded target answered again (failures only inside the
// outage), and no restart failed the same way twice (no restart loop).
// The normal suite runs a short seeded round; LOADFLEET_SOAK=1 runs every failpoint, both restarts,
// and more random instants.
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJournal } from '../coordinator/journal/frame.js';
import { parseSegments, segmentIndex, segmentPath } from '../coordinator/journal/segments.js';
import type { JournalHeader } from '../coordinator/run/journal-header.js';
import type { FailpointName } from '../shared/failpoints.js';
import { decodeAgentMessage } from '../shared/protocol.js';
import type { Finished } from './harness.js';
import { constantRatePlan, distPath, freePort, readRequests, readRunJson, startNode, tempDir, waitFor, writePlan } from './harness.js';

const SOAK = process.env.LOADFLEET_SOAK === '1';
const TOKEN = { LOADFLEET_TOKEN: 'crash-matrix' };
const DURATION_S = 12;
const RATE = 5;
const PLANNED = DURATION_S * RATE;
const GRACE_S = 20;

/** How a coordinator process of a case dies, or ends. */
type Kill =
  /** LOADFLEET_FAILPOINTS=name[:detail]=kill@N in that process (a run-directory failpoint's detail: the file). */
  | { failpoint: FailpointName; at: number; detail?: string }
  /** SIGKILL to its process group, `randomMs` after its load's first second (`armed`: after its agents are armed; a restart: after it says it recovered). */
  | { randomMs: number; armed?: true };

interface Case {
  name: string;
  /** The first coordinator's death. */
  first: Kill;
  /** How it is restarted. */
  restart: 'start' | 'resume';
  /** Deaths of the restarted coordinators, in turn, before one completes. */
  again?: Kill[];
  /** Append this many zeros to the journal after the first death (a tail whose data never reached the disk). */
  zeroTail?: number;
  /** Flip a byte a third of the way into the journal after the first death: damage before its end. */
  damage?: true;
}

// A small seeded generator (mulberry32), so a failing random instant can be run again.
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = Number(process.env.LOADFLEET_CRASH_SEED ?? 20261207);
const rand = seeded(SEED);

const SHORT: Case[] = [
  {
    name: 'a group written but not synced, the journal then ending in 8 KiB of zeros; the same start restarted',
    first: { failpoint: 'journal.flush.before-sync', at: 20 },
    restart: 'start',
    zeroTail: 8192,
  },
  {
    name: 'a group synced, its ack not sent; resume killed as an agent rejoins, then resumed again',
    first: { failpoint: 'journal.flush.after-sync', at: 45 },
    restart: 'resume',
    again: [{ failpoint: 'recover.rejoin', at: 1 }],
  },
  {
    name: `a seeded random instant in the load (seed ${SEED}), process group killed; the same start restarted`,
    first: { randomMs: Math.round(rand() * 3000) },
    restart: 'start',
  },
];

// Every failpoint a run passes, each restarted both ways, and random instants (also while recovering).
function soakCases(): Case[] {
  const inRun: [FailpointName, number, string?][] = [
    ['journal.header.synced', 1],
    ['journal.append', 20],
    ['journal.flush.before-write', 25],
    ['journal.flush.before-sync', 35],
    ['journal.flush.after-sync', 50],
    // The first atomic write is the server's metrics before the load, before the journal exists.
    ['rundir.write', 1],
    ['rundir.rename.before', 1, 'requests.ndjson'],
    ['rundir.write', 1, 'run.json'],
    ['rundir.rename.before', 1, 'run.json'],
    ['rundir.rename.after', 1, 'run.json'],
    ['rundir.sync.before', 1],
    ['journal.remove.before', 1],
    ['journal.remove.after', 1],
  ];
  const inRecovery: FailpointName[] = [
    'recover.read',
    'recover.truncate',
    'recover.reopen',
    'recover.replay',
    'recover.listen',
    'recover.rejoin',
  ];
  const cases: Case[] = [];
  for (const [failpoint, at, detail] of inRun)
    for (const restart of ['start', 'resume'] as const)
      cases.push({
        name: `${failpoint}${detail ? `:${detail}` : ''}@${at}, ${restart}`,
        first: { failpoint, at, ...(detail && { detail }) },
        restart,
      });
  for (const failpoint of inRecovery)
    cases.push({
      name: `mid-load, then ${failpoint} while recovering`,
      first: { failpoint: 'journal.flush.after-sync', at: 40 },
      restart: 'start',
      again: [{ failpoint, at: 1 }],
      // recover.truncate is passed only when there is a tail to cut.
      ...(failpoint === 'recover.truncate' && { zeroTail: 4096 }),
    });
  // Damage before the journal's end: set aside, and the same start goes on with a new run.
  cases.push({
    name: 'a journal damaged in its middle, the same start restarted',
    first: { failpoint: 'journal.flush.after-sync', at: 40 },
    restart: 'start',
    damage: true,
  });
  cases.push({
    name: 'a journal damaged in its middle, resume',
    first: { failpoint: 'journal.flush.after-sync', at: 40 },
    restart: 'resume',
    damage: true,
  });
  // Between the arming and the start instant (about 2 s): no agent has begun its load.
  cases.push({ name: 'killed between arming and the start', first: { randomMs: 500, armed: true }, restart: 'start' });
  cases.push({ name: 'killed between arming and the start, resume', first: { randomMs: 500, armed: true }, restart: 'resume' });
  for (let i = 0; i < 6; i++)
    cases.push({
      name: `random instant ${i} (seed ${SEED})`,
      first: { randomMs: Math.round(rand() * (DURATION_S + 2) * 1000) },
      restart: i % 2 === 0 ? 'start' : 'resume',
      ...(i % 3 === 2 && { again: [{ randomMs: Math.round(rand() * 3000) }] }),
    });
  return cases;
}

const armed = (k: { failpoint: FailpointName; at: number; detail?: string }): Record<string, string> => ({
  LOADFLEET_FAILPOINTS: `${k.failpoint}${k.detail ? `:${k.detail}` : ''}=kill@${k.at}`,
});

/** A coordinator in its own process group, so a kill can take the group. */
function coordinator(
  args: readonly string[],
  env: Record<string, string>,
): { child: ChildProcess; done: Promise<Finished & { signal: string | null }> } {
  const child = spawn(process.execPath, [distPath('coordinator/main.js'), ...args], {
    env: { ...process.env, ...TOKEN, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Finished & { signal: string | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

// Resolves once nothing listens on the port (the killed coordinator's embedded target went with it).
async function portClosed(port: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (!open) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** The highest sequence number each (agent, epoch) heard acknowledged in `runId`. */
function auditedAcks(auditDir: string, runId: string): Map<string, number> {
  const acked = new Map<string, number>();
  if (!existsSync(auditDir)) return acked;
  for (const file of readdirSync(auditDir).filter((f) => f.endsWith('.acks'))) {
    const agent = file.slice(0, -'.acks'.length);
    for (const line of readFileSync(join(auditDir, file), 'utf8').split('\n')) {
      const [run, epoch, seq] = line.split(' ');
      if (run !== runId || seq === undefined) continue;
      const key = `${agent} ${epoch}`;
      acked.set(key, Math.max(acked.get(key) ?? 0, Number(seq)));
    }
  }
  return acked;
}

/** When `runDir`'s journal was last written, in seconds after its run's start (null without one). */
function journalWrittenS(runDir: string): number | null {
  const path = join(runDir, 'journal', 'run.journal');
  if (!existsSync(path)) return null;
  const first = parseJournal(readFileSync(path)).frames[0];
  if (first?.kind !== 'header') return null;
  return (statSync(path).mtimeMs * 1e6 - Number((first.header as JournalHeader).start_ns)) / 1e9;
}

/** Every sequence number the journal on disk holds, by (agent, epoch); null when the journal is gone. */
function journaled(runDir: string): Map<string, Set<number>> | null {
  const path = join(runDir, 'journal', 'run.journal');
  if (!existsSync(path)) return null;
  // Every segment, in order (the first is run.journal).
  const names = readdirSync(join(runDir, 'journal'));
  const indices = names.map((n) => segmentIndex('run.journal', n)).filter((i): i is number => i !== null);
  const parsed = parseSegments(indices.sort((a, b) => a - b).map((i) => readFileSync(segmentPath(path, i))));
  const [first, ...frames] = parsed.frames;
  const header = (first?.kind === 'header' ? first.header : null) as JournalHeader | null;
  const held = new Map<string, Set<number>>();
  if (!header) return held;
  for (const f of frames) {
    if (f.kind !== 'message') continue;
    const key = `${header.agents[f.message.agent]!.agent_id} ${f.message.epoch}`;
    const rseq = (decodeAgentMessage(f.message.raw) as { rseq?: number }).rseq;
    if (rseq === undefined) continue;
    if (!held.has(key)) held.set(key, new Set());
    held.get(key)!.add(rseq);
  }
  return held;
}

describe.runIf(process.platform === 'linux')('the crash matrix: the coordinator killed at each crash point, restarted', () => {
  const work = tempDir('loadfleet-crash-');
  const auditDir = join(work, 'audit');
  const spool = join(work, 'spool');
  const agents: ReturnType<typeof startNode>[] = [];
  let port = 0;
  let planPath = '';
  const outcomes: string[] = [];

  beforeAll(async () => {
    port = await freePort();
    planPath = writePlan(work, constantRatePlan('crash', DURATION_S, RATE));
    mkdirSync(auditDir, { recursive: true });
  });
  afterAll(async () => {
    for (const a of agents) a.child.kill('SIGTERM');
    await Promise.all(agents.map((a) => a.done));
    // The outcomes, for the reliability page's table.
    if (outcomes.length > 0) process.stderr.write(`crash matrix outcomes:\n${outcomes.join('\n')}\n`);
  });

  function ensureAgents(): void {
    if (agents.length > 0) return;
    for (const id of ['c1', 'c2'])
      agents.push(
        startNode('agent/main.js', ['--coordinator', `ws://127.0.0.1:${port}`, '--id', id, '--spool-dir', spool, '--stay'], {
          ...TOKEN,
          LOADFLEET_ACK_AUDIT_DIR: auditDir,
        }),
      );
  }

  // Starts a coordinator process, kills it as `kill` says (or lets it finish), and returns how it ended.
  async function runOnce(args: string[], kill: Kill | null, armedLine: RegExp) {
    const env: Record<string, string> = kill && 'failpoint' in kill ? armed(kill) : {};
    const c = coordinator(args, env);
    if (kill && 'randomMs' in kill) {
      const armed = await Promise.race([waitFor(c.child.stderr!, armedLine, 90_000).then(() => true), c.done.then(() => false)]);
      if (armed) {
        await new Promise((r) => setTimeout(r, kill.randomMs));
        try {
          process.kill(-c.child.pid!, 'SIGKILL');
        } catch {
          // already exited
        }
      }
    }
    return c.done;
  }

  async function runCase(k: Case): Promise<void> {
    const out = join(work, `out-${k.name.replace(/\W+/g, '-').slice(0, 60)}`);
    const startArgs = [
      'start',
      '--agents',
      '2',
      '--listen',
      `127.0.0.1:${port}`,
      '--agent-grace-s',
      String(GRACE_S),
      '--plan',
      planPath,
      '--out',
      out,
    ];
    const c0 = coordinator(startArgs, 'failpoint' in k.first ? armed(k.first) : {});
    await waitFor(c0.child.stderr!, /waiting for 2 agent\(s\)/, 60_000);
    ensureAgents();
    if ('randomMs' in k.first) {
      const armed = await Promise.race([
        waitFor(c0.child.stderr!, k.first.armed ? /all 2 agents armed/ : /\bt=1s\b/, 90_000).then(() => true),
        c0.done.then(() => false),
      ]);
      if (armed) {
        await new Promise((r) => setTimeout(r, (k.first as { randomMs: number }).randomMs));
        try {
          process.kill(-c0.child.pid!, 'SIGKILL');
        } catch {
          // it finished first
        }
      }
    }
    const first = await c0.done;
    if (process.env.LOADFLEET_CRASH_DEBUG) process.stderr.write(`FIRST:\n${first.stderr.slice(-3000)}\n`);
    const runDirs = () => (existsSync(out) ? readdirSync(out).sort() : []);
    const runDir = join(out, runDirs()[0]!);
    const runId = runDirs()[0]!;
    const deaths: string[] = [];
    let ended = first;
    /** When the first coordinator last wrote its journal (s after the start): its outage began then. */
    let firstDownS: number | null = null;
    // After every death: every sequence number an agent heard acknowledged is in the journal on disk.
    const checkAcks = (): void => {
      const held = journaled(runDir);
      if (held === null) {
        // Finished, or killed before its journal existed (then no agent heard any acknowledgement).
        if (!existsSync(join(runDir, 'run.json'))) expect(auditedAcks(auditDir, runId).size, `${runDir}: acks heard, no journal`).toBe(0);
        return;
      }
      for (const [key, acked] of auditedAcks(auditDir, runId)) {
        const have = held.get(key) ?? new Set<number>();
        const missing = Array.from({ length: acked }, (_, i) => i + 1).filter((s) => !have.has(s));
        expect(missing, `${key} heard ${acked} acknowledged; the journal lacks`).toEqual([]);
      }
    };
    if (first.signal === 'SIGKILL') {
      deaths.push(
        'failpoint' in k.first
          ? `killed at ${k.first.failpoint}${k.first.detail ? `:${k.first.detail}` : ''}`
          : `killed ${k.first.randomMs} ms after ${k.first.armed ? 'its agents were armed' : "the load's first second"}`,
      );
      if ('failpoint' in k.first)
        expect(first.stderr).toContain(`[failpoint] ${k.first.failpoint}${k.first.detail ? `:${k.first.detail}` : ''} (kill`);
      checkAcks();
      firstDownS = journalWrittenS(runDir) ?? firstDownS;
      // The embedded target died with its coordinator (its stdin closed).
      const simUrl = /engine-sim listening at (http:\/\/[\d.:]+)/.exec(first.stderr)?.[1];
      if (simUrl) expect(await portClosed(Number(new URL(simUrl).port), 10_000)).toBe(true);
      if (k.zeroTail && existsSync(join(runDir, 'journal', 'run.journal')))
        appendFileSync(join(runDir, 'journal', 'run.journal'), Buffer.alloc(k.zeroTail));
      if (k.damage) {
        const path = join(runDir, 'journal', 'run.journal');
        const bytes = readFileSync(path);
        // A third of the way into its frames (the segment's zeros after them are its end, not its middle).
        const at = Math.floor(parseJournal(bytes).goodBytes / 3);
        bytes[at] = bytes[at]! ^ 0x5a;
        writeFileSync(path, bytes);
      }
      const restartArgs = k.restart === 'start' ? startArgs : ['resume', runDir, '--listen', `127.0.0.1:${port}`];
      const errors = new Set<string>();
      for (const kill of [...(k.again ?? []), null]) {
        ended = await runOnce(restartArgs, kill, /recovered run \S+ from its journal|\bt=1s\b/);
        if (ended.signal === 'SIGKILL') {
          deaths.push(kill && 'failpoint' in kill ? `recovery killed at ${kill.failpoint}` : 'recovery killed');
          checkAcks();
          continue;
        }
        // No restart loop: a restart that fails does not fail the same way again.
        const err = /error (LF_\w+)/.exec(ended.stderr)?.[1];
        if (ended.code !== 0 && err) {
          expect(errors.has(err), `a restart failed twice with ${err}:\n${ended.stderr}`).toBe(false);
          errors.add(err);
        }
      }
    }
    // Killed before any agent's message reached the journal: nothing to recover; `resume` says so
    // (exit 2), the same `start` starts the run anew.
    const neverJournaled = !existsSync(join(runDir, 'journal')) && !existsSync(join(runDir, 'run.json'));
    const notStarted =
      ended.stderr.includes('holds no agent message') || existsSync(join(runDir, 'journal', 'run.journal.not-started')) || neverJournaled;
    if (neverJournaled && k.restart === 'resume') {
      // Killed before its journal existed: `resume` has nothing to read.
      expect(ended.code).toBe(2);
      expect(ended.stderr).toContain('could not be read (ENOENT)');
      outcomes.push(`| ${k.name} | ${deaths.join('; ')} | resume | killed before the journal existed: nothing to recover, exit 2 |`);
      return;
    }
    if (k.damage) {
      expect(existsSync(join(runDir, 'journal', 'run.journal.damaged.reason.txt'))).toBe(true);
      expect(readFileSync(join(runDir, 'journal', 'run.journal.damaged.reason.txt'), 'utf8')).toContain('agent c1 on');
      if (k.restart === 'resume') {
        expect(ended.code).toBe(2);
        expect(ended.stderr).toContain('is damaged before its end');
        // Asked again, it says where the journal went: the same refusal, not a loop of recoveries.
        const again = await runOnce(['resume', runDir, '--listen', `127.0.0.1:${port}`], null, /never/);
        expect(again.code).toBe(2);
        expect(again.stderr).toContain('was set aside as damaged');
        outcomes.push(
          `| ${k.name} | ${deaths.join('; ')} | resume | exit 2, damage named, journal set aside with its reason and the agents' spools; asked again: exit 2, where it went |`,
        );
        return;
      }
      expect(ended.stderr).toContain('cannot be recovered: starting a new run');
    }
    if (notStarted && k.restart === 'resume') {
      expect(ended.code).toBe(2);
      expect(ended.stderr).toContain('holds no agent message: its coordinator stopped before the load began');
      outcomes.push(
        `| ${k.name} | ${deaths.join('; ')} | resume | nothing to recover (no agent message in the journal): exit 2, journal set aside |`,
      );
      return;
    }
    expect(ended.code, `${k.name}: the last coordinator:\n${ended.stderr.slice(-4000)}`).toBe(0);
    // Every run directory under --out is complete, each planned request in it once.
    const summary: string[] = [];
    for (const name of runDirs()) {
      const dir = join(out, name);
      if (existsSync(join(dir, 'journal', 'run.journal.damaged'))) {
        summary.push('the damaged journal set aside with its reason, a new run started');
        continue;
      }
      if (existsSync(join(dir, 'journal', 'run.journal.not-started')) || (name === runId && neverJournaled)) {
        summary.push('the first run never began its load: its journal set aside, a new run started');
        continue;
      }
      expect(existsSync(join(dir, 'journal', 'run.journal')), `${dir} still holds its journal`).toBe(false);
      const rows = readRequests(dir);
      const indices = rows.map((r) => Number(r.request_index)).sort((a, b) => a - b);
      expect(indices, `${dir}: every planned request once`).toEqual(Array.from({ length: PLANNED }, (_, i) => i));
      const run = readRunJson(dir);
      const failed = rows.filter((r) => r.status !== 'ok').length;
      if (run.recovered) {
        // The target was started again at its address: failures only while it was down (plus the timeouts in flight).
        // From the first outage's start (a recovery killed again adds to it) to the last restart.
        const downS = Math.min(firstDownS ?? run.recovered.down_from_s, run.recovered.down_from_s);
        const outageS = run.recovered.restarted_at_s - downS;
        const inWindow = Math.max(0, Math.min(run.recovered.restarted_at_s, DURATION_S) - Math.min(downS, DURATION_S));
        expect(failed, `${dir}: ${failed} failed, outage ${outageS.toFixed(1)} s`).toBeLessThanOrEqual(Math.ceil((inWindow + 1) * RATE));
        // Request i is due at i / RATE s: those due a second after the restart found the target at its address.
        const late = rows.filter((r) => Number(r.request_index) / RATE > run.recovered.restarted_at_s + 1);
        expect(
          late.filter((r) => r.status !== 'ok').map((r) => `${r.request_index}: ${r.error}`),
          `${dir}: requests due after the restart`,
        ).toEqual([]);
        summary.push(
          `recovered (down ${run.recovered.down_from_s.toFixed(1)}–${run.recovered.restarted_at_s.toFixed(1)} s, ${run.recovered.replayed_messages} replayed, tail ${run.recovered.torn_tail_bytes} B of which ${run.recovered.zero_tail_bytes} zeros), ${PLANNED}/${PLANNED} once, ${failed} failed (${late.length} due after the restart, all ok)`,
        );
      } else summary.push(`${name === runId ? 'finished' : 'a new run'}: ${PLANNED}/${PLANNED} once, ${failed} failed`);
    }
    outcomes.push(`| ${k.name} | ${deaths.join('; ') || 'not killed'} | ${k.restart} | ${summary.join('; ')} |`);
  }

  const cases = SOAK ? [...SHORT, ...soakCases()] : SHORT;
  for (const k of cases) it(k.name, () => runCase(k), 240_000);
});
