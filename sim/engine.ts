// The simple engine (`--engine simple`, v1's timing model): FCFS admission up to a concurrency cap
// and one step loop for the whole server. Steps fall on an absolute grid (t0 + k·itl); a late step is recorded as overrun and the
// grid never drifts. The first token is emitted on the first step at or after its due instant, as a
// real engine emits it from the step that finishes prefill, so TTFT is quantised to the step period.
import { realClock } from './clock.js';
import { type EngineJob, type JourneyEventType, note, type SimEngine } from './job.js';
import type { AbortReason, SimMetrics } from './metrics.js';

/** Timing and capacity of the engine. */
export interface EngineTiming {
  ttftMs: number;
  itlMs: number;
  prefillUsPerToken: number;
  maxConcurrency: number;
}

/** A submitted job's place in the engine; pass it back to cancel. */
export interface Ticket {
  readonly job: EngineJob;
  state: 'waiting' | 'running' | 'done' | 'cancelled';
  readonly arrivalNs: bigint;
  nextDueNs: bigint;
  emitted: number;
  /** When the previous token went out, for the inter-token histogram. */
  lastTokenNs: bigint;
}

const msToNs = (ms: number): bigint => BigInt(Math.round(ms * 1e6));
const nsToS = (ns: bigint): number => Number(ns) / 1e9;

/** The scheduler and step loop shared by every request of one server. */
export class Engine implements SimEngine {
  private readonly waiting = new Set<Ticket>();
  private readonly running = new Set<Ticket>();
  private readonly itlNs: bigint;
  private timer: NodeJS.Timeout | undefined;
  private gridStartNs: bigint | undefined;
  private stepIndex = 0n;
  private stepping = false;
  private stopped = false;

  constructor(
    private readonly timing: EngineTiming,
    private readonly metrics: SimMetrics,
    private readonly now: () => bigint = process.hrtime.bigint,
  ) {
    this.itlNs = msToNs(timing.itlMs);
  }

  /** Requests generating now. */
  get runningCount(): number {
    return this.running.size;
  }

  /** Requests queued for a slot. */
  get waitingCount(): number {
    return this.waiting.size;
  }

  /** This model has no KV cache. */
  get kvUsage(): number {
    return 0;
  }

  /** Queues a job (admitting it at once if a slot is free). */
  submit(job: EngineJob): Ticket {
    const ticket: Ticket = { job, state: 'waiting', arrivalNs: this.now(), nextDueNs: 0n, emitted: 0, lastTokenNs: 0n };
    if (this.stopped) {
      ticket.state = 'cancelled';
      return ticket;
    }
    this.waiting.add(ticket);
    journey(ticket, 'QUEUED');
    this.admitWaiting(ticket.arrivalNs);
    return ticket;
  }

  /** Removes a waiting or running job at once; a no-op for finished ones. */
  cancel(ticket: Ticket, reason: AbortReason): void {
    if (ticket.state !== 'waiting' && ticket.state !== 'running') return;
    const wasRunning = ticket.state === 'running';
    ticket.state = 'cancelled';
    this.waiting.delete(ticket);
    this.running.delete(ticket);
    this.metrics.aborted[reason] += 1;
    if (wasRunning) this.admitWaiting(this.now());
  }

  /** Cancels everything and stops the loop; later submissions are cancelled on arrival. */
  stop(): void {
    this.stopped = true;
    for (const ticket of [...this.running, ...this.waiting]) this.cancel(ticket, 'shutdown');
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private admitWaiting(nowNs: bigint): void {
    for (const ticket of this.waiting) {
      if (this.running.size >= this.timing.maxConcurrency) break;
      this.waiting.delete(ticket);
      this.start(ticket, nowNs);
    }
    this.arm();
  }

  private start(ticket: Ticket, nowNs: bigint): void {
    const { promptTokens, pause } = ticket.job;
    const pauseMs = pause?.afterTokens === 0 ? pause.ms : 0;
    ticket.state = 'running';
    journey(ticket, 'SCHEDULED');
    ticket.nextDueNs = nowNs + msToNs(this.timing.ttftMs + (this.timing.prefillUsPerToken * promptTokens) / 1000 + pauseMs);
    this.running.add(ticket);
  }

  private arm(): void {
    // During a step, onTimer arms once at the end, when the step's finishes and admissions are known.
    if (this.timer !== undefined || this.stepping || this.running.size === 0 || this.stopped) return;
    const nowNs = this.now();
    if (this.gridStartNs === undefined) {
      this.gridStartNs = nowNs;
      this.stepIndex = 0n;
    }
    const delayMs = Number(this.dueNs() - nowNs) / 1e6;
    this.timer = setTimeout(() => this.onTimer(), Math.max(0, delayMs));
  }

  private dueNs(): bigint {
    return (this.gridStartNs ?? 0n) + this.stepIndex * this.itlNs;
  }

  private onTimer(): void {
    this.timer = undefined;
    const nowNs = this.now();
    const dueNs = this.dueNs();
    // Timers run on a cached millisecond clock and may fire a little early: wait for the due time.
    if (nowNs >= dueNs) {
      this.metrics.stepOverrun.observe(nsToS(nowNs - dueNs));
      // The next step is the first grid point after this one's start: a late step is followed by at
      // most one immediate step, never a burst through every missed point.
      this.stepIndex = (nowNs - (this.gridStartNs ?? nowNs)) / this.itlNs + 1n;
      this.stepping = true;
      this.step(nowNs);
      this.stepping = false;
    }
    if (this.running.size === 0) this.gridStartNs = undefined;
    this.arm();
  }

  private step(nowNs: bigint): void {
    // A snapshot, because callbacks may cancel jobs and finishing admits new ones.
    for (const ticket of [...this.running]) {
      if (ticket.state === 'running' && ticket.nextDueNs <= nowNs) this.emit(ticket, nowNs);
    }
  }

  private emit(ticket: Ticket, nowNs: bigint): void {
    const { job } = ticket;
    const index = ticket.emitted;
    ticket.emitted += 1;
    if (index === 0) {
      this.metrics.ttft.observe(nsToS(nowNs - ticket.arrivalNs));
      this.metrics.promptTokens += job.promptTokens;
      journey(ticket, 'FIRST_TOKEN');
    } else {
      this.metrics.itl.observe(nsToS(nowNs - ticket.lastTokenNs));
    }
    ticket.lastTokenNs = nowNs;
    this.metrics.generationTokens += 1;
    ticket.nextDueNs = job.pause?.afterTokens === ticket.emitted ? nowNs + msToNs(job.pause.ms) : 0n;
    job.onToken(index);
    if (ticket.state === 'running' && ticket.emitted >= job.outputTokens) this.finish(ticket, nowNs);
  }

  private finish(ticket: Ticket, nowNs: bigint): void {
    ticket.state = 'done';
    this.running.delete(ticket);
    this.metrics.e2e.observe(nsToS(nowNs - ticket.arrivalNs));
    this.metrics.success[ticket.job.finishReason] += 1;
    journey(ticket, 'FINISHED');
    ticket.job.onFinish();
    this.admitWaiting(nowNs);
  }
}

// A traced job's journey is stamped on the clock spans are placed by (realClock), not this engine's
// nanosecond one; this model has no steps, so its prompt counts as prefilled once it has a token.
function journey(ticket: Ticket, type: JourneyEventType): void {
  if (!ticket.job.trace) return;
  const prefillDone = ticket.emitted > 0 ? ticket.job.promptTokens : 0;
  note(ticket.job, {
    type,
    atS: realClock.nowS(),
    prefillDone,
    decodeDone: ticket.emitted,
    ...(type === 'SCHEDULED' ? { kind: 'FIRST' } : {}),
  });
}
