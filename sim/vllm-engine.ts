// Runs one replica's scheduler (vllm-core.ts) in time: a step starts, lasts as long as the profile
// says, and its tokens go out when it ends; the next step starts at once if there is work. On wall
// time a timer that fires a little late (timer granularity) is absorbed by starting the next step
// at the due time, so the timeline does not drift; a long stall (a blocked event loop) slips the
// timeline instead of bursting through missed steps. Lateness is recorded as step overrun.
import { realClock, type SimClock, type TimerHandle } from './clock.js';
import type { EngineJob, EngineTicket, SimEngine } from './job.js';
import type { AbortReason, SimMetrics } from './metrics.js';
import { type ReplicaConfig, VllmCore } from './vllm-core.js';
import type { Seq, StepPlan } from './vllm-step.js';

/** Lateness up to this is caught up on; beyond it the timeline slips. */
export const CATCH_UP_S = 0.005;

const CANCELLED: EngineTicket = { state: 'cancelled' };

/** One simulated vLLM replica. */
export class VllmEngine implements SimEngine {
  private readonly core: VllmCore;
  // idle: no step and none pending; starting: a step starts after the current task; stepping: a
  // step is running until its timer fires.
  private phase: 'idle' | 'starting' | 'stepping' = 'idle';
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(
    config: ReplicaConfig,
    private readonly metrics: SimMetrics,
    private readonly clock: SimClock = realClock,
  ) {
    this.core = new VllmCore(config, metrics);
  }

  /** Requests in the running batch. */
  get runningCount(): number {
    return this.core.runningCount;
  }

  /** Requests waiting to be scheduled. */
  get waitingCount(): number {
    return this.core.waitingCount;
  }

  /** Share of KV blocks held, 0–1. */
  get kvUsage(): number {
    return this.core.kvUsage;
  }

  /** Forgets every cached prefix block; returns how many. */
  resetPrefixCache(): number {
    return this.core.resetPrefixCache();
  }

  /** Queues a job; the next step to start picks it up. */
  submit(job: EngineJob): EngineTicket {
    if (this.stopped) return CANCELLED;
    const seq = this.core.add(job, this.clock.nowS());
    this.wake();
    return seq;
  }

  /** Removes a waiting or running job; a running one's blocks are freed at once. */
  cancel(ticket: EngineTicket, reason: AbortReason): void {
    // Every other ticket came from submit(), i.e. from this engine's core.
    if (ticket !== CANCELLED) this.core.abort(ticket as Seq, reason);
  }

  /** Cancels everything and stops stepping. */
  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.core.abortAll('shutdown');
  }

  // Starts a step after the current task, so requests arriving together share it.
  private wake(): void {
    if (this.phase !== 'idle' || this.stopped) return;
    this.timer?.cancel(); // a pending stall wake-up
    this.phase = 'starting';
    this.timer = this.clock.at(this.clock.nowS(), () => this.startStep(this.clock.nowS()));
  }

  private startStep(startS: number): void {
    const plan = this.core.schedule(startS);
    if (!plan) {
      this.phase = 'idle';
      this.timer = undefined;
      // Only stalled requests are left: look again when the first stall ends.
      const wakeS = this.core.nextPauseEndS(startS);
      if (wakeS !== undefined) this.timer = this.clock.at(wakeS, () => this.wake());
      return;
    }
    this.phase = 'stepping';
    const dueS = startS + plan.durationS;
    this.timer = this.clock.at(dueS, () => this.endStep(plan, dueS));
  }

  private endStep(plan: StepPlan, dueS: number): void {
    const nowS = this.clock.nowS();
    const lateS = Math.max(0, nowS - dueS);
    this.metrics.stepOverrun.observe(lateS);
    this.core.complete(plan, nowS);
    if (this.stopped) return;
    this.startStep(lateS <= CATCH_UP_S ? dueS : nowS);
  }
}
