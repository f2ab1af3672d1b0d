// journal_ack: what durable acknowledgements cost the coordinator. Record batches (100 rows each,
// encoded as agents send them) are fed, one per event-loop turn as socket reads arrive, through a
// real AgentChannel and Collector (which writes requests.ndjson beside the journal) — first with no
// journal (acknowledged once taken), then with the run journal under a few settings (acknowledged
// once fdatasync'ed): appended with a 2 ms group deadline (the journal before preallocated
// segments), the same in preallocated segments, preallocated with no deadline (each group what
// arrived during the previous flush), and the default (preallocated, the 2 ms deadline only while
// frames come faster than that). Records/s counts acknowledged records only; the journal's own
// counters give the flushes and group sizes; each batch's wait for its ack gives p50 and p99.
// Not a suite: `node dist/bench/journal-ack.js [--dir DIR] [--records N]` prints one JSON document.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AgentChannel } from '../coordinator/channel.js';
import { Collector } from '../coordinator/collector.js';
import { RunJournal } from '../coordinator/journal/run-journal.js';
import type { GroupCommit } from '../coordinator/journal/writer.js';
import { DEFAULT_GROUP_COMMIT } from '../coordinator/journal/writer.js';
import type { Hello } from '../coordinator/server.js';
import { AgentConn } from '../coordinator/server.js';
import type { Plan } from '../shared/plan.js';
import { decodeAgentMessage, encodeMessage, PROTOCOL_VERSION } from '../shared/protocol.js';
import { buildSchedule } from '../shared/schedule.js';
import { row } from './synthetic-row.js';

const ROWS = 100;
const PLAN: Plan = {
  schema: 'loadfleet.plan/v1',
  name: 'bench-journal',
  seed: 1,
  duration_s: 600,
  drain_timeout_s: 0,
  target: { base_url: 'http://127.0.0.1:9/v1', api: 'chat', model: 'none', timeout_s: 10 },
  classes: [
    {
      name: 'bench',
      prompt: { input_tokens: 16, output_tokens: 128 },
      load: { model: 'concurrency', phases: [{ start_s: 0, duration_s: 600, concurrency: 1 }] },
    },
  ],
};
const HELLO: Hello = {
  type: 'hello',
  protocol: PROTOCOL_VERSION,
  agent_id: 'bench',
  host: 'h',
  pid: 1,
  clock_domain_id: 'd',
  clock_domain_declared: false,
  epoch: 'e',
};

interface Result {
  journal: string;
  records_per_s: number;
  /** Records per second of this process's CPU (user + system, every thread: the journal's writes and flushes run on libuv's pool). */
  records_per_cpu_s: number;
  ack_wait_ms_mean: number | null;
  ack_wait_ms_p50: number;
  ack_wait_ms_p99: number;
  flushes: number | null;
  frames_per_flush_mean: number | null;
  frames_per_flush_max: number | null;
  flush_ms_mean: number | null;
}

async function once(dir: string, records: number, commit: GroupCommit | null): Promise<Result> {
  const runDir = mkdtempSync(join(dir, 'run-'));
  const frames = Array.from({ length: Math.ceil(records / ROWS) }, (_, b) =>
    encodeMessage({ type: 'records', seq: b, rseq: b + 1, rows: Array.from({ length: ROWS }, (_, i) => row(b * ROWS + i)) }),
  );
  const collector = new Collector(PLAN, buildSchedule(PLAN), [{ agentId: 'bench', startLocalNs: 0n, alignNs: 0n }], runDir, 0n, () => [0]);
  const journal = commit ? await RunJournal.open(runDir, { bench: true }, () => {}, commit) : null;
  let acked = 0;
  let lastAck!: () => void;
  const allAcked = new Promise<void>((r) => (lastAck = r));
  const sentAt: number[] = [];
  const waits: number[] = [];
  let waitMs = 0;
  const ws = { readyState: 1, send() {}, close() {}, terminate() {} };
  const conn = new AgentConn(HELLO, 'bench', ws as never);
  // Acks are cumulative: each batch counts once, when the first ack covering it goes out.
  const send = conn.send.bind(conn);
  conn.send = (m) => {
    if (m.type !== 'ack') return send(m);
    while (acked < m.seq) {
      const w = performance.now() - sentAt[acked++]!;
      waits.push(w);
      waitMs += w;
    }
    if (acked === frames.length) lastAck();
  };
  const ch = new AgentChannel(conn, 0, {
    linkClosed: () => {},
    durable: (_c, raw) => journal?.message(0, 'e', raw) ?? null,
  });
  ch.onMessage((m) => m.type === 'records' && collector.records(0, m.rows));
  ch.step('probe');
  // Decoded beforehand: the server's decoding costs the same with or without the journal.
  const decoded = frames.map((f) => decodeAgentMessage(f));
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (const [i, f] of frames.entries()) {
    sentAt[i] = performance.now();
    conn.deliver(decoded[i]!, f);
    await new Promise((r) => setImmediate(r));
  }
  await allAcked;
  const s = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(c0);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  await journal?.close();
  await collector.close();
  rmSync(runDir, { recursive: true, force: true });
  const st = journal?.stats;
  waits.sort((a, b) => a - b);
  const q = (p: number): number => Math.round(waits[Math.min(waits.length - 1, Math.ceil(p * waits.length) - 1)]! * 1000) / 1000;
  return {
    journal: commit
      ? `${commit.segmentBytes ? 'preallocated segments' : 'appended'}, group deadline ${commit.maxDelayMs ? `${commit.maxDelayMs} ms${commit.adaptive ? ' while frames come faster' : ''}` : 'none (what arrived during the previous flush)'}, ≤ ${commit.maxFrames} frames`
      : 'none',
    records_per_s: Math.round(records / s),
    records_per_cpu_s: Math.round(records / cpuS),
    ack_wait_ms_mean: Math.round((waitMs / frames.length) * 1000) / 1000,
    ack_wait_ms_p50: q(0.5),
    ack_wait_ms_p99: q(0.99),
    flushes: st ? st.groups : null,
    frames_per_flush_mean: st ? Math.round(((st.frames - 1) / st.groups) * 10) / 10 : null,
    frames_per_flush_max: st ? st.maxGroupFrames : null,
    flush_ms_mean: st ? Math.round((st.flushMs / st.groups) * 1000) / 1000 : null,
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const arg = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i === -1 ? undefined : args[i + 1];
  };
  const dir = arg('--dir') ?? process.cwd();
  const records = Number(arg('--records') ?? 200_000);
  const work = mkdtempSync(join(dir, 'lf-bench-journal-'));
  const appended: GroupCommit = { maxDelayMs: 2, adaptive: false, maxFrames: 256, maxBytes: 4 * 1024 * 1024, segmentBytes: 0 };
  const settings: (GroupCommit | null)[] = [
    null,
    appended,
    { ...DEFAULT_GROUP_COMMIT, adaptive: false },
    { ...DEFAULT_GROUP_COMMIT, maxDelayMs: 0 },
    DEFAULT_GROUP_COMMIT,
  ];
  const results: Result[] = [];
  try {
    for (const c of settings) results.push(await once(work, records, c));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(
    `${JSON.stringify({ schema: 'loadfleet.bench.journal/v1', dir, records, rows_per_batch: ROWS, date: new Date().toISOString(), results }, null, 2)}\n`,
  );
}

await main();
