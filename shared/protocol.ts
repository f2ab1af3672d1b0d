// Every coordinator⇄agent message, as one discriminated union, and its msgpackr codec. A frame
// that does not decode to a known message with the right field types is rejected here, so
// neither side ever acts on a malformed frame.
import { Packr } from 'msgpackr';
import { SEQUENCED_TYPES } from './delivery.js';
import { ErrorCode, LoadfleetError } from './errors.js';
import type { RequestRecord } from './metrics.js';
import type { Plan } from './plan.js';
import type { TalliesData } from './record-tally.js';
import type { SelfTestFigures } from './self-test.js';
import type { Share } from './shares.js';

/**
 * Bumped on any incompatible change; both sides refuse a different one. 2: agents belong to a
 * fleet (many runs per link, `release`), and reconnect mid-run (`resume_live`, `resume`).
 * 3: every message that must arrive carries `rseq` and is acknowledged cumulatively, `final`
 * included; agents carry an epoch and prove themselves on resume (shared/delivery.ts).
 */
export const PROTOCOL_VERSION = 3;
/** HTTP upgrade header carrying the agent's protocol version. */
export const PROTOCOL_HEADER = 'x-loadfleet-protocol';
/** Environment variable that holds the shared token. */
export const TOKEN_ENV = 'LOADFLEET_TOKEN';
/** Path of the coordinator's WebSocket endpoint. */
export const AGENT_PATH = '/agents';

/** WebSocket close codes that carry the coordinator's reasons, so the agent can act on them. */
export const CLOSE_CODE = {
  /** A resume of a run this coordinator does not hold (over, or the agent's grace ran out). */
  UNKNOWN_RUN: 4404,
  /** An agent id that is already connected, or a fleet that is full. */
  DUPLICATE: 4009,
  /** The coordinator is releasing its fleet and takes no one new. */
  FINISHING: 4503,
} as const;

/** Per-class counts and encoded histograms of one 1-second interval of one agent. */
export interface IntervalClass {
  issued: number;
  completed: number;
  failed: number;
  /** metric → V2 compressed base64 histogram (only non-empty ones). */
  histograms: Record<string, string>;
}

/** An agent's health figures over the run (or so far). */
export interface AgentHealth {
  schedule_lag_p99_ms: number | null;
  schedule_lag_max_ms: number | null;
  event_loop_delay_p99_ms: number;
  event_loop_delay_max_ms: number;
  cpu_ms: number;
  /** Event-loop utilisation over the run, 0–1 (absent from old agents). */
  elu?: number;
  /** The agent's longest event-loop stalls of the run, with what the process did meanwhile (absent from old agents). */
  stalls?: AgentStall[];
}

/** One stall of an agent's event loop (agent/stall-log.ts). */
export interface AgentStall {
  /** Second of the run (from the shared start instant) in which it ended. */
  second: number;
  /** How late a 50 ms timer fired, ms. */
  ms: number;
  /** gc: a garbage collection took half the gap or more; busy: the process was on a CPU that long; no_cpu: it was not (a busy host, or paused). */
  cause: 'gc' | 'busy' | 'no_cpu';
  cpu_ms: number;
  gc_ms: number;
}

/**
 * An agent's warm-up (`GET {base}/models` before any load): whether the target answered it from
 * where the agent runs. `status` is the HTTP status, null when no answer came (`error` says why:
 * refused, DNS, TLS, a timeout); `latency_ms` until the answer's headers or the error.
 */
export interface WarmUp {
  url: string;
  status: number | null;
  error: string | null;
  latency_ms: number;
}

/** Messages an agent sends. */
export type AgentMessage =
  | {
      type: 'hello';
      protocol: number;
      agent_id: string;
      host: string;
      pid: number;
      clock_domain_id: string;
      clock_domain_declared: boolean;
      /** Half-width of the bracket that anchored the agent's clock to its wall clock (absent from old agents). */
      clock_anchor_uncertainty_ns?: number;
      /** Worker threads striping the agent's share (absent from old agents: 1). */
      workers?: number;
      /**
       * Set by an agent that comes back to a run: a restarted process that holds the run's spool
       * (it uploads, it sends no load), or with `resume_live` the same process after its link was cut
       * (it carries on with its load and resends what was not acknowledged).
       */
      resume_run_id?: string;
      resume_live?: boolean;
      /** What the agent measured of itself before joining (agent/self-test; absent when skipped, and from old agents). */
      self_test?: SelfTestFigures;
      /** This agent process (random per process): a resume with another epoch is a restarted process. */
      epoch?: string;
      /** The secret the fleet issued at join (`joined`): proves a rejoin or resume is the same process. */
      secret?: string;
    }
  /** `seq`: the probe's own number (its `probe`'s), not a sequence number of the run. */
  | {
      type: 'probe_reply';
      seq: number;
      t1_ns: bigint;
      t2_ns: bigint;
      t3_ns: bigint;
      /**
       * How far the agent's run timeline was slewed back from its raw clock at t2 (ns), once a run
       * has armed: with it a probe measures the run timeline itself, not only the raw clock.
       */
      clock_correction_ns?: number;
    }
  | {
      type: 'prepared';
      prep_ms: number;
      planned_requests: number;
      /** The agent's read-only request to the target before any load (absent from old agents). */
      warm_up?: WarmUp;
    }
  | { type: 'armed'; start_local_ns: bigint }
  | { type: 'started'; first_send_error_ns: number; rseq?: number }
  | {
      type: 'heartbeat';
      in_flight: number;
      sent: number;
      done: number;
      errors: number;
      health: AgentHealth;
      /** How far the agent has slewed its run timeline back so far (ns; absent from old agents). */
      clock_correction_ns?: number;
    }
  /** One record batch; `seq` is its batch number (the agent's outbox counts them from 0 in each run), `rseq` its sequence number. */
  | { type: 'records'; seq: number; rows: RequestRecord[]; rseq?: number }
  | { type: 'interval'; second: number; classes: Record<string, IntervalClass>; rseq?: number }
  | {
      type: 'final';
      windows: Record<string, Record<string, Record<string, string>>>;
      health: AgentHealth;
      records: number;
      /** Set when the agent ended its share early because its process was told to stop (SIGTERM): why. */
      terminated?: string;
      /**
       * With sampled records (plan.records.sample_every), the agent's own counts of every request
       * it finished, by class and window: the coordinator's counts, goodput and verdicts add these.
       */
      tally?: TalliesData;
      rseq?: number;
    }
  | { type: 'failed'; code: string; message: string; rseq?: number };

/**
 * A message that must arrive (shared/delivery.ts SEQUENCED_TYPES). Its `rseq` is set by the
 * agent's outbox (the runners leave it out) and is required on the wire.
 */
export type SequencedMessage = Extract<AgentMessage, { type: 'records' | 'interval' | 'started' | 'failed' | 'final' }>;

/** Messages the coordinator sends. */
export type CoordinatorMessage =
  | {
      type: 'welcome';
      agent_index: number;
      agent_count: number;
      run_id: string;
      /** The coordinator's host clock domain and its clock anchor (absent from old coordinators). */
      host_domain?: string;
      anchor?: { wall_ns: bigint; hr: bigint; uncertainty_ns: number };
      /** How long the coordinator holds a cut-off agent as reconnecting; the agent keeps its load going that long. */
      grace_ms?: number;
    }
  /** Sent once an agent is admitted to the fleet: the secret it presents when it comes back on a new link. */
  | { type: 'joined'; secret: string }
  /** A clock probe; `seq` is the probe's own number, echoed by its reply. */
  | { type: 'probe'; seq: number; t1_ns: bigint }
  | { type: 'plan'; run_id: string; plan: Plan; share: Share }
  | { type: 'arm'; start_local_ns: bigint }
  /**
   * The rate (ppm of the agent's run clock) at which the agent slews its run timeline back, so it
   * follows the coordinator's: the measured drift plus the error left, spread over a few seconds.
   */
  | { type: 'slew'; rate_ppm: number }
  /** Cumulative: every sequenced message up to `seq` (its `rseq`) was taken. */
  | { type: 'ack'; seq: number }
  /** The run takes the agent back; `acked` is its high-water mark (resend from acked + 1). */
  | { type: 'resume'; run_id: string; acked?: number }
  | { type: 'stop'; reason: string }
  | { type: 'abort'; reason: string }
  /** The coordinator has no more runs: the agent exits 0 (or, with --stay, waits for the next coordinator). */
  | { type: 'release'; reason: string };

/** Either direction. */
export type Message = AgentMessage | CoordinatorMessage;

type FieldType = 'number' | 'string' | 'bigint' | 'boolean' | 'object' | 'array';

// The required fields of every message type: the decoder's whole notion of "well formed".
const SHAPES: Record<Message['type'], Record<string, FieldType>> = {
  hello: {
    protocol: 'number',
    agent_id: 'string',
    host: 'string',
    pid: 'number',
    clock_domain_id: 'string',
    clock_domain_declared: 'boolean',
  },
  probe_reply: { seq: 'number', t1_ns: 'bigint', t2_ns: 'bigint', t3_ns: 'bigint' },
  prepared: { prep_ms: 'number', planned_requests: 'number' },
  armed: { start_local_ns: 'bigint' },
  started: { first_send_error_ns: 'number' },
  heartbeat: { in_flight: 'number', sent: 'number', done: 'number', errors: 'number', health: 'object' },
  records: { seq: 'number', rows: 'array' },
  interval: { second: 'number', classes: 'object' },
  final: { windows: 'object', health: 'object', records: 'number' },
  failed: { code: 'string', message: 'string' },
  welcome: { agent_index: 'number', agent_count: 'number', run_id: 'string' },
  joined: { secret: 'string' },
  probe: { seq: 'number', t1_ns: 'bigint' },
  plan: { run_id: 'string', plan: 'object', share: 'object' },
  arm: { start_local_ns: 'bigint' },
  slew: { rate_ppm: 'number' },
  ack: { seq: 'number' },
  resume: { run_id: 'string' },
  stop: { reason: 'string' },
  abort: { reason: 'string' },
  release: { reason: 'string' },
};

const AGENT_TYPES = new Set([
  'hello',
  'probe_reply',
  'prepared',
  'armed',
  'started',
  'heartbeat',
  'records',
  'interval',
  'final',
  'failed',
]);

// One codec instance per process; records disabled so every frame decodes on its own.
const packr = new Packr({ useRecords: false, moreTypes: true });

/** Encodes a message into one binary WebSocket frame. */
export function encodeMessage(m: Message): Buffer {
  return packr.pack(m);
}

function typeOf(v: unknown): FieldType | 'other' {
  if (Array.isArray(v)) return 'array';
  const t = typeof v;
  if (t === 'object') return v === null ? 'other' : 'object';
  return t === 'number' || t === 'string' || t === 'bigint' || t === 'boolean' ? t : 'other';
}

/** Decodes and checks a frame; throws LF_BAD_FRAME naming what is wrong. */
export function decodeMessage(frame: Uint8Array): Message {
  let value: unknown;
  try {
    value = packr.unpack(frame);
  } catch (err) {
    throw new LoadfleetError(ErrorCode.BAD_FRAME, `frame is not msgpack: ${(err as Error).message}`);
  }
  if (typeOf(value) !== 'object') throw new LoadfleetError(ErrorCode.BAD_FRAME, 'frame is not a message object');
  const obj = value as Record<string, unknown>;
  // An own entry only: a type named `constructor` or `toString` must not find what every object inherits.
  const shape = typeof obj.type === 'string' && Object.hasOwn(SHAPES, obj.type) ? SHAPES[obj.type as Message['type']] : undefined;
  if (shape === undefined) throw new LoadfleetError(ErrorCode.BAD_FRAME, `unknown message type ${JSON.stringify(obj.type)}`);
  if (SEQUENCED_TYPES.has(obj.type as string) && typeOf(obj.rseq) !== 'number')
    throw new LoadfleetError(ErrorCode.BAD_FRAME, `${String(obj.type)}.rseq: expected number, got ${typeOf(obj.rseq)}`);
  for (const [field, expected] of Object.entries(shape)) {
    const actual = typeOf(obj[field]);
    if (actual !== expected) {
      throw new LoadfleetError(ErrorCode.BAD_FRAME, `${String(obj.type)}.${field}: expected ${expected}, got ${actual}`);
    }
  }
  return obj as unknown as Message;
}

/** Decodes a frame that must come from an agent. */
export function decodeAgentMessage(frame: Uint8Array): AgentMessage {
  const m = decodeMessage(frame);
  if (!AGENT_TYPES.has(m.type)) throw new LoadfleetError(ErrorCode.BAD_FRAME, `agents may not send ${m.type}`);
  return m as AgentMessage;
}

/** Decodes a frame that must come from the coordinator. */
export function decodeCoordinatorMessage(frame: Uint8Array): CoordinatorMessage {
  const m = decodeMessage(frame);
  if (AGENT_TYPES.has(m.type)) throw new LoadfleetError(ErrorCode.BAD_FRAME, `the coordinator may not send ${m.type}`);
  return m as CoordinatorMessage;
}

/** Checks the upgrade request's token and protocol; returns the refusal (status + message) or null. */
export function checkUpgrade(
  headers: Record<string, string | string[] | undefined>,
  token: string,
): { status: number; message: string } | null {
  const auth = headers.authorization;
  if (typeof auth !== 'string' || !timingSafeEqualStr(auth, `Bearer ${token}`)) {
    return { status: 401, message: `${ErrorCode.AUTH_REFUSED}: missing or wrong token` };
  }
  const version = headers[PROTOCOL_HEADER];
  if (version !== String(PROTOCOL_VERSION)) {
    return {
      status: 426,
      message: `${ErrorCode.PROTOCOL_MISMATCH}: coordinator speaks protocol ${PROTOCOL_VERSION}, agent sent ${version ?? 'none'}; run the same loadfleet version on both sides`,
    };
  }
  return null;
}

// Constant-time comparison so a token cannot be guessed byte by byte from response timing.
function timingSafeEqualStr(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  let diff = ab.length ^ bb.length;
  for (let i = 0; i < Math.max(ab.length, bb.length); i++) diff |= (ab[i] ?? 0) ^ (bb[i] ?? 0);
  return diff === 0;
}
