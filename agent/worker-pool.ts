// `agent --workers N`: the agent's share striped over N worker threads (shares.ts subShare), so
// one agent process can use several cores. The main thread keeps the link and speaks for the
// agent: it passes the threads' record batches on (the outbox numbers and paces them), holds each second's
// interval until every running thread has sent it, and folds the threads' `started`, heartbeats
// and `final` into one (worker-merge.ts).
import { Worker } from 'node:worker_threads';
import type { Clock } from '../shared/clock.js';
import { ErrorCode } from '../shared/errors.js';
import { getOrCreate } from '../shared/maps.js';
import type { Plan } from '../shared/plan.js';
import type { AgentMessage, IntervalClass, WarmUp } from '../shared/protocol.js';
import { mergeTallies } from '../shared/record-tally.js';
import type { Share } from '../shared/shares.js';
import { subShare } from '../shared/shares.js';
import type { ShareRunner, SpoolTarget } from './share-runner.js';
import { SlewTimeline } from './slew-timeline.js';
import type { ThreadCommand, ThreadEvent, ThreadInit } from './thread-messages.js';
import { combineHealth, mergeIntervals, mergeRunWindows } from './worker-merge.js';

type Final = Extract<AgentMessage, { type: 'final' }>;
type Heartbeat = Extract<AgentMessage, { type: 'heartbeat' }>;

/** Runs one share over worker threads and presents it as one agent. */
export class WorkerPool implements ShareRunner {
  private stopped = false;
  /** Why the process ended this run early (SIGTERM), if it did. */
  private terminated: string | undefined;
  private readonly threads: Worker[];
  private readonly clock: Clock;
  private readonly waiters: ((e: ThreadEvent) => void)[][];
  private readonly seconds = new Map<number, Map<number, Record<string, IntervalClass>>>();
  /** The last second each thread sent; Infinity once it sent `final` (it sends no more). */
  private readonly lastSecond: number[];
  private readonly starts: (number | undefined)[];
  private readonly heartbeats: (Heartbeat | undefined)[];
  private readonly finals: (Final | undefined)[];
  private planned = 0;
  private warmUpResult: WarmUp | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private failed = false;
  /**
   * The threads' run timeline, mirrored on this thread from the same slew commands (each thread
   * applies a command within a message hop of this one), so a clock probe answered here can say
   * how far the run timeline is slewed back. Its origin: the start instant in hrtime.
   */
  private readonly timeline = new SlewTimeline();
  private startHr: bigint | undefined;

  constructor(
    runId: string,
    plan: Plan,
    share: Share,
    clock: Clock,
    private readonly send: (m: AgentMessage) => void,
    parts: number,
  ) {
    this.clock = clock;
    this.lastSecond = new Array<number>(parts).fill(-1);
    this.starts = new Array(parts).fill(undefined);
    this.heartbeats = new Array(parts).fill(undefined);
    this.finals = new Array(parts).fill(undefined);
    this.waiters = Array.from({ length: parts }, () => []);
    this.threads = Array.from({ length: parts }, (_, part) => {
      const init: ThreadInit = { runId, plan, share: subShare(share, part, parts), anchor: clock.anchor, part, fleetAgents: share.count };
      const t = new Worker(new URL('./worker-thread.js', import.meta.url), { workerData: init });
      t.on('message', (e: ThreadEvent) => this.onEvent(part, e));
      t.on('error', (err) => this.onEvent(part, { kind: 'failed', message: `worker thread ${part}: ${err.message}` }));
      return t;
    });
  }

  async prepare(spool: SpoolTarget): Promise<string> {
    const events = await this.each({ cmd: 'prepare', spool }, 'prepared');
    this.planned = events.reduce((n, e) => n + (e.kind === 'prepared' ? e.planned : 0), 0);
    // One process, one network path: the target is reachable from here when any thread got an answer.
    const warmUps = events.flatMap((e) => (e.kind === 'prepared' && e.warmUp ? [e.warmUp] : []));
    this.warmUpResult = warmUps.find((w) => w.status !== null) ?? warmUps[0];
    return `${this.threads.length} worker threads; ${events.map((e) => (e.kind === 'prepared' ? e.note : '')).join('; ')}`;
  }

  plannedRequests(): number {
    return this.planned;
  }

  warmUp(): WarmUp | undefined {
    return this.warmUpResult;
  }

  async start(startLocalNs: bigint): Promise<void> {
    this.startHr = process.hrtime.bigint() + (startLocalNs - this.clock.nowNs());
    this.heartbeatTimer = setInterval(() => this.heartbeat(), 1000);
    try {
      await this.each({ cmd: 'start', startLocalNs }, 'ended');
    } finally {
      clearInterval(this.heartbeatTimer);
      await this.close();
    }
  }

  stop(reason: string): void {
    this.stopped = true;
    this.broadcast({ cmd: 'stop', reason });
  }

  terminate(reason: string): void {
    if (this.stopped) return;
    this.terminated = reason;
    this.stop(reason);
  }

  slew(ratePpm: number): void {
    if (this.startHr !== undefined) this.timeline.slew(Number(process.hrtime.bigint() - this.startHr), ratePpm);
    this.broadcast({ cmd: 'slew', ratePpm });
  }

  clockCorrectionNs(): number | undefined {
    return this.startHr === undefined ? undefined : this.timeline.correctionAtRaw(Number(process.hrtime.bigint() - this.startHr));
  }

  linkLost(reason: string): void {
    this.broadcast({ cmd: 'link-lost', reason });
  }

  async discardSpool(): Promise<void> {
    await this.each({ cmd: 'discard' }, 'ended');
    await this.close();
  }

  private broadcast(c: ThreadCommand): void {
    for (const t of this.threads) t.postMessage(c);
  }

  // Sends `c` to every thread and waits for each one's `kind` event (a failure rejects).
  private each(c: ThreadCommand, kind: ThreadEvent['kind']): Promise<ThreadEvent[]> {
    return Promise.all(
      this.threads.map(
        (t, part) =>
          new Promise<ThreadEvent>((resolve, reject) => {
            this.waiters[part]!.push((e) => (e.kind === 'failed' ? reject(new Error(e.message)) : e.kind === kind && resolve(e)));
            t.postMessage(c);
          }),
      ),
    );
  }

  private async close(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.terminate()));
  }

  private onEvent(part: number, e: ThreadEvent): void {
    if (e.kind === 'msg') {
      this.relay(part, e.msg);
      return;
    }
    const waiting = this.waiters[part]!.splice(0);
    for (const w of waiting) w(e);
    // A failure nobody awaits (the session reports awaited ones) still has to reach the coordinator.
    if (e.kind === 'failed' && waiting.length === 0 && !this.failed) {
      this.failed = true;
      this.send({ type: 'failed', code: ErrorCode.AGENT_FAILED, message: e.message });
    }
  }

  private relay(part: number, m: AgentMessage): void {
    switch (m.type) {
      case 'interval':
        this.secondOf(m.second).set(part, m.classes);
        this.lastSecond[part] = m.second;
        this.flushSeconds();
        return;
      case 'started':
        this.starts[part] = m.first_send_error_ns;
        // The agent started when its last thread did: that is the error the start skew must see.
        if (this.starts.every((s) => s !== undefined))
          this.send({ type: 'started', first_send_error_ns: Math.max(...(this.starts as number[])) });
        return;
      case 'heartbeat':
        this.heartbeats[part] = m;
        return;
      case 'final':
        // A thread that ended early on its own (its spool part cannot be written) ends the agent's
        // share: the other threads write to the same disk, and `final` must say why.
        if (m.terminated !== undefined) this.terminate(m.terminated);
        this.finals[part] = m;
        this.lastSecond[part] = Number.POSITIVE_INFINITY;
        this.flushSeconds();
        if (this.finals.every((f) => f !== undefined)) this.sendFinal(this.finals as Final[]);
        return;
      default:
        this.send(m);
    }
  }

  private secondOf(second: number): Map<number, Record<string, IntervalClass>> {
    return getOrCreate(this.seconds, second, () => new Map<number, Record<string, IntervalClass>>());
  }

  // A second is complete once every thread still running has sent it (each sends its seconds in order).
  private flushSeconds(): void {
    const upTo = Math.min(...this.lastSecond);
    for (const second of [...this.seconds.keys()].sort((a, b) => a - b)) {
      if (second > upTo) break;
      this.send({ type: 'interval', second, classes: mergeIntervals([...this.seconds.get(second)!.values()]) });
      this.seconds.delete(second);
    }
  }

  private heartbeat(): void {
    const beats = this.heartbeats.filter((h): h is Heartbeat => h !== undefined);
    if (beats.length === 0) return;
    const sum = (f: (h: Heartbeat) => number): number => beats.reduce((n, h) => n + f(h), 0);
    this.send({
      type: 'heartbeat',
      in_flight: sum((h) => h.in_flight),
      sent: sum((h) => h.sent),
      done: sum((h) => h.done),
      errors: sum((h) => h.errors),
      health: combineHealth(beats.map((h) => h.health)),
      // Every thread slews by the same commands: their corrections agree.
      ...(beats[0]!.clock_correction_ns === undefined ? {} : { clock_correction_ns: beats[0]!.clock_correction_ns }),
    });
  }

  private sendFinal(finals: readonly Final[]): void {
    this.send({
      type: 'final',
      windows: mergeRunWindows(finals.map((f) => f.windows)),
      health: combineHealth(finals.map((f) => f.health)),
      records: finals.reduce((n, f) => n + f.records, 0),
      ...(this.terminated !== undefined && { terminated: this.terminated }),
      // Sampled records: the threads' counts add up to the agent's.
      ...(finals.some((f) => f.tally) && { tally: mergeTallies(finals.map((f) => f.tally ?? {})) }),
    });
  }
}
