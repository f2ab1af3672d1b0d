// A synthetic fleet: many agents in one process, each a real WebSocket client speaking the real
// protocol (hello, probe replies, prepared, armed, started, heartbeats, records, intervals,
// final), so a real coordinator can be fed more than a machine's worth of real agents. It sends
// no HTTP; it only offers the coordinator data as fast as the coordinator takes it:
// - `records` mode: record batches, a few unacknowledged per agent (as real agents do);
// - `intervals` mode: interval histograms, each few followed by a one-row record batch whose
//   ack proves the coordinator has processed the intervals before it (it handles a link's
//   frames in order), so absorbed intervals are counted, not merely sent.
// Started by coordinator-ingest.ts with fork(); it is told what to do over the IPC channel.
//
// argv: <coordinator ws url> <token> <first agent number> <agent count>
import WebSocket from 'ws';
import { anchoredClock, hostClockDomain } from '../shared/clock.js';
import { encodeHistogram, newHistogram, recordNs } from '../shared/histogram.js';
import type { RequestRecord } from '../shared/metrics.js';
import type { AgentHealth, AgentMessage, CoordinatorMessage } from '../shared/protocol.js';
import { AGENT_PATH, decodeCoordinatorMessage, encodeMessage, PROTOCOL_HEADER, PROTOCOL_VERSION } from '../shared/protocol.js';
import type { FleetCommand, FleetEvent } from './fleet-protocol.js';
import { BATCH_ROWS, INTERVAL_METRICS } from './fleet-protocol.js';

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

function row(i: number): RequestRecord {
  const sent = 1e9 + i * 1e6;
  const first = sent + 40e6 + (i % 17) * 1e6;
  const done = first + 127 * 20e6 + (i % 5) * 1e6;
  return {
    class: 'bench',
    request_index: i,
    status: 'ok',
    http_status: 200,
    intended_ns: null,
    sent_ns: sent,
    headers_ns: sent + 2e6,
    first_output_ns: first,
    first_content_ns: first,
    last_token_ns: done,
    done_ns: done,
    prompt_tokens: 16,
    completion_tokens: 128,
    output_token_source: 'usage',
    cached_tokens: null,
    reasoning_chunks: 0,
    content_chunks: 128,
    canary: null,
    retry_after_s: null,
    dropped_reason: null,
    error: null,
  };
}

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

const HISTOGRAMS = histograms();
const BATCH = encodeMessage({ type: 'records', seq: 0, rows: Array.from({ length: BATCH_ROWS }, (_, i) => row(i)) });
const BARRIER = encodeMessage({ type: 'records', seq: 0, rows: [row(0)] });
const HEARTBEAT = encodeMessage({ type: 'heartbeat', in_flight: 0, sent: 0, done: 0, errors: 0, health });
const totals = { records_acked: 0, intervals_acked: 0 };
let mode: 'idle' | 'records' | 'intervals' = 'idle';

/** One synthetic agent on its own WebSocket. */
class SynthAgent {
  private readonly ws: WebSocket;
  /** What each unacknowledged batch stands for: rows it carries, or intervals it vouches for. */
  private readonly unacked: { rows: number; intervals: number }[] = [];
  private second = 0;

  constructor(
    id: string,
    private readonly onStarted: () => void,
    private readonly onClosed: () => void,
  ) {
    this.ws = new WebSocket(`${url}${AGENT_PATH}`, {
      headers: { authorization: `Bearer ${token}`, [PROTOCOL_HEADER]: String(PROTOCOL_VERSION) },
      perMessageDeflate: false,
    });
    this.ws.binaryType = 'nodebuffer';
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
        this.send({ type: 'started', first_send_error_ns: 0 });
        this.onStarted();
        return;
      case 'ack': {
        const done = this.unacked.shift();
        if (done) {
          totals.records_acked += done.rows;
          totals.intervals_acked += done.intervals;
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
        this.send(BATCH);
        this.unacked.push({ rows: BATCH_ROWS, intervals: 0 });
      }
    } else if (mode === 'intervals') {
      while (this.unacked.length < BARRIER_WINDOW) {
        for (let k = 0; k < INTERVALS_PER_BARRIER; k++) {
          this.send({
            type: 'interval',
            second: this.second++,
            classes: { bench: { issued: 50, completed: 50, failed: 0, histograms: HISTOGRAMS } },
          });
        }
        this.send(BARRIER);
        this.unacked.push({ rows: 1, intervals: INTERVALS_PER_BARRIER });
      }
    }
  }

  heartbeat(): void {
    this.send(HEARTBEAT);
  }

  final(): void {
    const windows = { bench: { all: HISTOGRAMS } };
    this.send({ type: 'final', windows, health, records: 0 });
  }
}

function main(): void {
  const first = Number(firstArg);
  const count = Number(countArg);
  let started = 0;
  let open = count;
  const agents = Array.from(
    { length: count },
    (_, i) =>
      new SynthAgent(
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
    if (c.cmd === 'report') return void process.send?.({ type: 'report', ...totals } satisfies FleetEvent);
    if (c.cmd === 'final') {
      mode = 'idle';
      for (const a of agents) a.final();
      return;
    }
    mode = c.cmd;
    for (const a of agents) a.pump();
  });
}

main();
