// A synthetic fleet: many agents in one process, each a real WebSocket client speaking the real
// protocol (hello, probe replies, prepared, armed, started, heartbeats, records, intervals,
// final), so a real coordinator can be fed more than a machine's worth of real agents. It sends
// no HTTP; it only offers the coordinator data as fast as the coordinator takes it:
// - `records` mode: record batches, a few unacknowledged per agent (as real agents do);
// - `intervals` mode: interval histograms, each few followed by a one-row record batch whose
//   ack proves the coordinator has processed the intervals before it (it handles a link's
//   frames in order), so absorbed intervals are counted, not merely sent.
// - `paced` mode (coordinator_ingest's merge lag): real time, as real agents send — at the end of
//   each wall-clock second every agent sends that second's interval and its records (every
//   request or every k-th, each a distinct request_index striped as shares are), and the process
//   notes when each interval's ack came back (paced.ts-style functions at the end of this file).
// - `stream` mode (coordinator_memory): a whole open-loop run of distinct requests, each agent its
//   share by request index, recorded by the real agent Recorder into interval histograms (sent as
//   each synthetic second closes) and run histograms (sent in `final` once every record is acked).
// Started by coordinator-ingest.ts and coordinator-memory.ts with fork(); it is told what to do
// over the IPC channel.
//
// argv: <coordinator ws url> <token> <first agent number> <agent count>
import WebSocket from 'ws';
import { Recorder } from '../agent/recorder.js';
import { anchoredClock, hostClockDomain } from '../shared/clock.js';
import { encodeHistogram, newHistogram, recordNs } from '../shared/histogram.js';
import type { RequestRecord } from '../shared/metrics.js';
import type { AgentHealth, AgentMessage, CoordinatorMessage, IntervalClass } from '../shared/protocol.js';
import { AGENT_PATH, decodeCoordinatorMessage, encodeMessage, PROTOCOL_HEADER, PROTOCOL_VERSION } from '../shared/protocol.js';
import type { FleetCommand, FleetEvent, PacedCommand, PacedSecondReport, StreamCommand } from './fleet-protocol.js';
import { BATCH_ROWS, INTERVAL_METRICS } from './fleet-protocol.js';
import { row } from './synthetic-row.js';

/** Record batches an agent keeps unacknowledged. */
const RECORD_WINDOW = 4;
/** Intervals sent before each one-row barrier batch, and barriers kept unacknowledged. */
const INTERVALS_PER_BARRIER = 4;
const BARRIER_WINDOW = 2;
const [url, token, firstArg, countArg] = process.argv.slice(2);
const clock = anchoredClock();
const domain = hostClockDomain();
const health: AgentHealth = {
  schedule_lag_p99_ms: null,
  schedule_lag_max_ms: null,
  event_loop_delay_p99_ms: 1,
  event_loop_delay_max_ms: 2,
  cpu_ms: 0,
};

// Histograms shaped like one busy agent-second (50 requests × 128 tokens), encoded once.
function histograms(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of INTERVAL_METRICS) {
    const h = newHistogram();
    const n = m === 'itl' ? 6350 : 50;
    for (let i = 0; i < n; i++) recordNs(h, (m === 'itl' || m === 'tpot' ? 20e6 : 45e6) + ((i * 7919) % 1000) * 1e4);
    out[m] = encodeHistogram(h);
  }
  return out;
}

/**
 * Request g of a stream: intended at g / rate; sent 0 … 2 ms after it; TTFT 40–200 ms and
 * TPOT 15–25 ms in µs steps (many ties across a million requests); one in a hundred a 429.
 */
function streamRow(cls: string, g: number, ratePerS: number): RequestRecord {
  const intended = Math.round((g * 1e9) / ratePerS);
  const sent = intended + ((g * 7919) % 2000) * 1e3;
  if (g % 100 === 99)
    return {
      ...row(g),
      class: cls,
      status: 'http_error',
      http_status: 429,
      intended_ns: intended,
      sent_ns: sent,
      headers_ns: sent + 1e6,
      first_output_ns: null,
      first_content_ns: null,
      last_token_ns: null,
      done_ns: sent + 1e6,
      completion_tokens: null,
      output_token_source: null,
      content_chunks: 0,
    };
  const first = sent + 40e6 + ((g * 104729) % 160_000) * 1e3;
  const done = first + 127 * (15e6 + ((g * 15485863) % 10_000) * 1e3);
  return {
    ...row(g),
    class: cls,
    intended_ns: intended,
    sent_ns: sent,
    headers_ns: sent + 1e6,
    first_output_ns: first,
    first_content_ns: first,
    last_token_ns: done,
    done_ns: done,
  };
}

/** Rows per record batch in stream mode (a real agent flushes up to 1,000 every 250 ms). */
const STREAM_BATCH_ROWS = 500;
/**
 * Closed synthetic seconds an agent may have waiting for their interval encode before it stops
 * making records. The synthetic clock runs as fast as the coordinator acknowledges (a batch is a
 * second of one agent's share), far faster than the Recorder's one-encode-per-loop-turn pace that
 * suits a real second; unchecked, the closed seconds' histograms (~270 KB per metric) piled up and
 * stayed in its pool: 8.1 GB in this process at 10M requests.
 */
const MAX_ENCODE_BACKLOG_S = 2;
/** Three ITL gaps per request: enough for an itl histogram, cheap to record. */
const STREAM_GAPS = [20e6, 21e6, 19e6];

const HISTOGRAMS = histograms();
// Pre-encoded with a placeholder rseq as their last field (a msgpack uint32), which each send
// overwrites with the agent's next sequence number: ws masks a client frame into a copy at once.
const RSEQ_PLACEHOLDER = 0xffffffff;
const BARRIER = sequencedFrame({ type: 'records', seq: 0, rows: [row(0)] });

function sequencedFrame(m: AgentMessage): Buffer {
  const b = encodeMessage({ ...m, rseq: RSEQ_PLACEHOLDER } as AgentMessage);
  if (b[b.length - 5] !== 0xce) throw new Error('rseq is not the last field of the frame');
  return b;
}
const HEARTBEAT = encodeMessage({ type: 'heartbeat', in_flight: 0, sent: 0, done: 0, errors: 0, health });
const totals = { records_acked: 0, intervals_acked: 0 };
/** Milliseconds from each record batch's send to its acknowledgement since the last report (at most MAX_ACK_WAITS). */
let ackWaits: number[] = [];
const MAX_ACK_WAITS = 200_000;
let mode: 'idle' | 'records' | 'intervals' | 'stream' = 'idle';
let stream: StreamCommand | undefined;
let streamedAgents = 0;
let streamedRecords = 0;

/** One synthetic agent on its own WebSocket. */
class SynthAgent {
  private readonly ws: WebSocket;
  /** Resolves once the socket opened (or failed to): connectInChunks waits for it. */
  readonly opened: Promise<void>;
  /** What each unacknowledged batch stands for: rows it carries, or intervals it vouches for. */
  private readonly unacked: { rseq: number; rows: number; intervals: number; sentMs: number }[] = [];
  /** The last sequence number used (every message that must arrive takes the next). */
  private rseq = 0;
  private second = 0;
  /** Stream mode: the next request index, the synthetic clock, and the recorder fed from it. */
  private next = -1;
  private nowNs = 0;
  private recorder: Recorder | undefined;
  private streamDone = false;
  private streamed = 0;
  /** Stream mode: intervals the recorder has handed over (encoded and sent). */
  private intervalsSent = 0;

  constructor(
    private readonly agentNo: number,
    id: string,
    private readonly onStarted: () => void,
    private readonly onClosed: () => void,
  ) {
    this.ws = new WebSocket(`${url}${AGENT_PATH}`, {
      headers: { authorization: `Bearer ${token}`, [PROTOCOL_HEADER]: String(PROTOCOL_VERSION) },
      perMessageDeflate: false,
    });
    this.ws.binaryType = 'nodebuffer';
    this.opened = new Promise((resolve) => {
      this.ws.once('open', () => resolve());
      this.ws.once('close', () => resolve());
    });
    this.ws.on('open', () =>
      this.send({
        type: 'hello',
        protocol: PROTOCOL_VERSION,
        agent_id: id,
        host: 'synthetic',
        pid: process.pid,
        clock_domain_id: domain,
        clock_domain_declared: false,
      }),
    );
    this.ws.on('message', (data: Buffer) => this.onMessage(decodeCoordinatorMessage(data)));
    this.ws.on('error', (err) => process.send?.({ type: 'error', message: `${id}: ${err.message}` } satisfies FleetEvent));
    this.ws.on('close', () => this.onClosed());
  }

  private send(m: AgentMessage | Buffer): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(Buffer.isBuffer(m) ? m : encodeMessage(m));
  }

  /** Sends a message that must arrive with the next sequence number; returns it. */
  private sendSeq(m: AgentMessage | Buffer): number {
    const rseq = ++this.rseq;
    if (Buffer.isBuffer(m)) m.writeUInt32BE(rseq, m.length - 4);
    this.send(Buffer.isBuffer(m) ? m : ({ ...m, rseq } as AgentMessage));
    return rseq;
  }

  private onMessage(m: CoordinatorMessage): void {
    switch (m.type) {
      case 'probe':
        this.send({ type: 'probe_reply', seq: m.seq, t1_ns: m.t1_ns, t2_ns: clock.nowNs(), t3_ns: clock.nowNs() });
        return;
      case 'plan':
        this.send({ type: 'prepared', prep_ms: 1, planned_requests: 0 });
        return;
      case 'arm':
        this.send({ type: 'armed', start_local_ns: m.start_local_ns });
        this.sendSeq({ type: 'started', first_send_error_ns: 0 });
        this.onStarted();
        return;
      case 'ack': {
        this.pacedAcked(m.seq);
        // Cumulative: every batch up to m.seq is taken.
        while (this.unacked.length > 0 && this.unacked[0]!.rseq <= m.seq) {
          const done = this.unacked.shift()!;
          totals.records_acked += done.rows;
          totals.intervals_acked += done.intervals;
          if (done.intervals === 0 && ackWaits.length < MAX_ACK_WAITS) ackWaits.push(performance.now() - done.sentMs);
        }
        this.pump();
        return;
      }
      case 'release':
        this.ws.close(1000, 'released');
        return;
      default:
        return; // welcome, stop, abort: nothing to do
    }
  }

  /** Tops up this agent's unacknowledged batches for the current mode. */
  pump(): void {
    if (mode === 'records') {
      while (this.unacked.length < RECORD_WINDOW) {
        this.unacked.push({ rseq: this.sendSeq(this.distinctBatch()), rows: BATCH_ROWS, intervals: 0, sentMs: performance.now() });
      }
    } else if (mode === 'stream') {
      this.pumpStream();
    } else if (mode === 'intervals') {
      while (this.unacked.length < BARRIER_WINDOW) {
        for (let k = 0; k < INTERVALS_PER_BARRIER; k++) {
          this.sendSeq({
            type: 'interval',
            second: this.second++,
            classes: { bench: { issued: 50, completed: 50, failed: 0, histograms: HISTOGRAMS } },
          });
        }
        this.unacked.push({ rseq: this.sendSeq(BARRIER), rows: 1, intervals: INTERVALS_PER_BARRIER, sentMs: performance.now() });
      }
    }
  }

  // Sends this agent's next batches of the stream; after the last is acknowledged, its final.
  private pumpStream(): void {
    const c = stream!;
    if (!this.recorder) {
      this.recorder = new Recorder(
        c.windows,
        () => this.nowNs,
        (second, classes) => this.onInterval(second, classes),
      );
      this.next = this.agentNo;
    }
    const rec = this.recorder;
    while (this.unacked.length < RECORD_WINDOW && this.next < c.requests && this.encodeBacklogS() <= MAX_ENCODE_BACKLOG_S) {
      const rows: RequestRecord[] = [];
      for (; rows.length < STREAM_BATCH_ROWS && this.next < c.requests; this.next += c.agents) {
        const r = streamRow(c.class, this.next, c.rate_per_s);
        this.nowNs = r.intended_ns!;
        rec.issued(r.class, r.sent_ns - r.intended_ns!);
        rec.finished(r, r.status === 'ok' ? STREAM_GAPS : []);
        rows.push(r);
      }
      this.unacked.push({
        rseq: this.sendSeq({ type: 'records', seq: 0, rows }),
        rows: rows.length,
        intervals: 0,
        sentMs: performance.now(),
      });
      this.streamed += rows.length;
    }
    if (this.unacked.length > 0 || this.next < c.requests || this.streamDone) return;
    this.streamDone = true;
    rec.flushAll();
    void rec.drained().then(() => {
      this.sendSeq({ type: 'final', windows: rec.encodeRun(), health, records: this.streamed });
      streamedRecords += this.streamed;
      if (++streamedAgents === agentsInProcess)
        process.send?.({ type: 'streamed', agents: streamedAgents, records: streamedRecords } satisfies FleetEvent);
    });
  }

  // An encoded interval goes out; a stream paused on the encode backlog resumes.
  private onInterval(second: number, classes: Record<string, IntervalClass>): void {
    this.sendSeq({ type: 'interval', second, classes });
    this.intervalsSent++;
    if (mode === 'stream' && !this.streamDone) this.pumpStream();
  }

  /** Synthetic seconds closed (the clock passed them) whose interval is not sent yet. */
  private encodeBacklogS(): number {
    return Math.floor(this.nowNs / 1e9) - this.intervalsSent;
  }

  heartbeat(): void {
    this.send(HEARTBEAT);
  }

  /** Paced mode: intervals sent and not yet acknowledged, with the paced second each stands for. */
  private readonly pacedUnacked: { rseq: number; second: number }[] = [];
  /** Paced mode: requests of this agent so far (its j-th has request_index agentNo + n·(j0 + j)). */
  private pacedRequests = 0;

  /** Paced mode: this agent's interval for `second` and `rows` records of it (every sample_every-th of its requests). */
  pacedSend(second: number, c: PacedCommand, requests: number): number {
    this.second = second + 1; // intervals mode, if it follows, carries on from here
    this.pacedUnacked.push({ rseq: this.sendSeq(PACED_INTERVAL(second)), second });
    const indices: number[] = [];
    for (let j = 0; j < requests; j++, this.pacedRequests++)
      if (this.pacedRequests % c.sample_every === 0) indices.push(stripedIndex(this.agentNo, this.pacedRequests));
    if (indices.length > 0) this.sendSeq(pacedRecordsFrame(indices));
    return indices.length;
  }

  /**
   * A records batch of BATCH_ROWS requests this agent has not sent before (striped indices), so
   * the coordinator does each row's whole work: a resent index would be dropped as a duplicate.
   */
  private distinctBatch(): Buffer {
    const indices: number[] = [];
    while (indices.length < BATCH_ROWS) indices.push(stripedIndex(this.agentNo, this.pacedRequests++));
    return pacedRecordsFrame(indices);
  }

  private pacedAcked(seq: number): void {
    while (this.pacedUnacked.length > 0 && this.pacedUnacked[0]!.rseq <= seq) pacedAck(this.pacedUnacked.shift()!.second);
  }

  final(): void {
    const windows = { bench: { all: HISTOGRAMS } };
    this.sendSeq({ type: 'final', windows, health, records: 0 });
  }
}

const agentsInProcess = Number(countArg);

// ---- paced mode (coordinator_ingest's merge lag)

/** Agents of the whole fleet, as the striped request indices need it (set by the paced command). */
let fleetAgents = 1;
/** The first stripe of every agent: indices start at 65,536 or above, so each encodes as a msgpack uint32. */
let firstStripe = 1;
const pacedSeconds: Record<number, PacedSecondReport> = {};

/** The j-th request of agent `agentNo`, striped across the fleet as open-loop shares are (index ≡ agent mod n). */
function stripedIndex(agentNo: number, j: number): number {
  return agentNo + fleetAgents * (firstStripe + j);
}

/** One agent-second's interval (the same histograms as intervals mode), by second. */
function PACED_INTERVAL(second: number): AgentMessage {
  return { type: 'interval', second, classes: { bench: { issued: 50, completed: 50, failed: 0, histograms: HISTOGRAMS } } };
}

/** Record frames by row count, encoded once, with the byte offsets of each row's request_index (a uint32). */
const pacedFrames = new Map<number, { frame: Buffer; offsets: number[] }>();

function pacedRecordsFrame(indices: readonly number[]): Buffer {
  let f = pacedFrames.get(indices.length);
  if (!f) {
    const frame = sequencedFrame({ type: 'records', seq: 0, rows: indices.map((_, i) => ({ ...row(i), request_index: 0xfffffff0 - i })) });
    const key = Buffer.from('\xadrequest_index\xce', 'latin1');
    const offsets: number[] = [];
    for (let at = frame.indexOf(key); at !== -1; at = frame.indexOf(key, at + 1)) offsets.push(at + key.length);
    if (offsets.length !== indices.length) throw new Error('a request_index of the paced frame is not a uint32');
    f = { frame, offsets };
    pacedFrames.set(indices.length, f);
  }
  for (let i = 0; i < indices.length; i++) f.frame.writeUInt32BE(indices[i]!, f.offsets[i]!);
  return f.frame;
}

function pacedAck(second: number): void {
  const s = pacedSeconds[second];
  if (!s) return;
  s.acked++;
  s.last_ack_ms = Math.max(s.last_ack_ms, Date.now()); // the wall clock the parent times the seconds by
}

/** Sends second k's intervals and records from every agent of the process at the end of each second. */
function startPaced(c: PacedCommand, agents: readonly SynthAgent[]): void {
  fleetAgents = c.fleet_agents;
  firstStripe = Math.ceil(65536 / fleetAgents);
  const tick = (k: number): void => {
    if (k >= c.seconds) return;
    const second = c.first_second + k;
    // Requests of this second: the per-second rate spread evenly (a fractional rate accumulates).
    const requests = Math.floor((k + 1) * c.records_per_agent_s) - Math.floor(k * c.records_per_agent_s);
    const report: PacedSecondReport = { acked: 0, last_ack_ms: 0, last_send_ms: 0, rows: 0 };
    pacedSeconds[second] = report;
    for (const a of agents) report.rows += a.pacedSend(second, c, requests);
    report.last_send_ms = Date.now();
    const next = c.start_epoch_ms + (k + 2) * 1000;
    setTimeout(() => tick(k + 1), Math.max(0, next - Date.now()));
  };
  // Second k ends at start + (k + 1) s: its interval goes then.
  setTimeout(() => tick(0), Math.max(0, c.start_epoch_ms + 1000 - Date.now()));
}

/** Sockets a fleet process opens at once. */
const CONNECT_CHUNK = 20;

/**
 * Opens the process's agents CONNECT_CHUNK at a time (the array fills as they open). All at once,
 * 5,000 agents of ten processes overflowed the coordinator's accept queue (Node listens with a
 * backlog of 511): a few dozen handshakes hung and the fleet never filled before the join
 * timeout. Real agents start at different moments and retry with backoff; these do neither.
 */
function connectInChunks(count: number, make: (i: number) => SynthAgent): SynthAgent[] {
  const agents: SynthAgent[] = [];
  void (async () => {
    for (let i = 0; i < count; i += CONNECT_CHUNK) {
      const chunk = Array.from({ length: Math.min(CONNECT_CHUNK, count - i) }, (_, k) => make(i + k));
      agents.push(...chunk);
      await Promise.all(chunk.map((a) => a.opened));
    }
  })();
  return agents;
}

function main(): void {
  const first = Number(firstArg);
  const count = agentsInProcess;
  let started = 0;
  let open = count;
  const agents = connectInChunks(
    count,
    (i) =>
      new SynthAgent(
        first + i,
        `synth-${first + i}`,
        () => {
          if (++started === count) process.send?.({ type: 'started', agents: count } satisfies FleetEvent);
        },
        () => {
          if (--open === 0) process.exit(0);
        },
      ),
  );
  // Heartbeats as real agents send them; the coordinator declares a silent agent lost.
  setInterval(() => {
    for (const a of agents) a.heartbeat();
  }, 1000).unref();
  process.on('message', (c: FleetCommand) => {
    if (c.cmd === 'report') {
      const waits = ackWaits;
      ackWaits = [];
      return void process.send?.({ type: 'report', ...totals, ack_waits_ms: waits } satisfies FleetEvent);
    }
    if (c.cmd === 'final') {
      mode = 'idle';
      for (const a of agents) a.final();
      return;
    }
    if (c.cmd === 'paced') return void startPaced(c, agents);
    if (c.cmd === 'paced_report') return void process.send?.({ type: 'paced', seconds: pacedSeconds } satisfies FleetEvent);
    if (c.cmd === 'stream') stream = c;
    mode = c.cmd;
    for (const a of agents) a.pump();
  });
}

main();
