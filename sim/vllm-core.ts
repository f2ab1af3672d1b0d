// The scheduler of one simulated vLLM replica, as a pure state machine: no timers and no I/O, every
// call takes the current time, so it runs the same on wall time (vllm-engine.ts) and on a virtual
// clock (tests, the offline fit). It follows vLLM V1's scheduler: running requests first (decodes
// and unfinished prefill chunks), then waiting ones while max_num_seqs, the token budget and the KV
// cache allow; a request that needs a block when none is free preempts the newest running request
// (recompute: its blocks are freed and it waits to prefill again).
import { type EngineJob, type JourneyEvent, type JourneyEventType, note } from './job.js';
import { BLOCK_SIZE, emptyHolder, KvCache } from './kv-cache.js';
import type { AbortReason, SimMetrics } from './metrics.js';
import { type EngineProfile, stepDurationS } from './profile.js';
import { runsBefore, type SchedulingPolicy, WaitingQueue } from './vllm-queue.js';
import { addToPlan, emptyPlan, numTokens, removeFromPlan, type Seq, type StepPlan } from './vllm-step.js';

/** Limits and costs of one replica. */
export interface ReplicaConfig {
  maxNumSeqs: number;
  maxNumBatchedTokens: number;
  kvCacheTokens: number;
  prefixCaching: boolean;
  scheduling: SchedulingPolicy;
  profile: EngineProfile;
}

/** The scheduler and KV cache of one replica. */
export class VllmCore {
  private readonly kv: KvCache;
  private readonly waiting: WaitingQueue<Seq>;
  private running: Seq[] = [];
  private nextOrder = 0;
  private live = { running: 0, waiting: 0 };
  // Steps planned so far and the start of the current one, for journey events (traced jobs only).
  private steps = 0;
  private stepStartS = 0;

  constructor(
    private readonly config: ReplicaConfig,
    private readonly metrics: SimMetrics,
  ) {
    this.kv = new KvCache(config.kvCacheTokens, config.prefixCaching);
    this.waiting = new WaitingQueue(config.scheduling);
  }

  /** Requests in the running batch (prefilling or decoding). */
  get runningCount(): number {
    return this.live.running;
  }

  /** Requests waiting to be scheduled. */
  get waitingCount(): number {
    return this.live.waiting;
  }

  /** Share of KV blocks held, 0–1. */
  get kvUsage(): number {
    return this.kv.usage;
  }

  /** Forgets every cached prefix block (kv-cache.ts); returns how many. */
  resetPrefixCache(): number {
    return this.kv.resetPrefixCache();
  }

  /** Queues a job that arrived at `nowS`. */
  add(job: EngineJob, nowS: number): Seq {
    const pausedUntilS = job.pause?.afterTokens === 0 ? nowS + job.pause.ms / 1000 : 0;
    const seq: Seq = {
      state: 'waiting',
      job,
      order: this.nextOrder++,
      priority: job.priority ?? 0,
      arrivalS: nowS,
      computed: 0,
      generated: 0,
      kv: emptyHolder(),
      pausedUntilS,
      lastTokenS: nowS,
      remoteKv: job.remoteKvTokens ?? 0,
    };
    // A disaggregated decode noted its arrival itself, before its KV transfer.
    if (job.trace?.journey.length === 0) note(job, this.event(seq, 'QUEUED', nowS));
    this.enqueue(seq);
    return seq;
  }

  /** Drops a waiting or running request and frees its blocks; a no-op for finished ones. */
  abort(seq: Seq, reason: AbortReason): void {
    if (seq.state === 'waiting') this.live.waiting -= 1;
    else if (seq.state === 'running') this.leaveRunning(seq);
    else return;
    seq.state = 'cancelled';
    this.metrics.aborted[reason] += 1;
  }

  /** Aborts everything. */
  abortAll(reason: AbortReason): void {
    for (const seq of [...this.running, ...this.waiting.entries()]) this.abort(seq, reason);
  }

  /** The earliest end of a stall among requests that could otherwise run; undefined if none. */
  nextPauseEndS(nowS: number): number | undefined {
    let soonest: number | undefined;
    for (const seq of [...this.running, ...this.waiting.entries()]) {
      if (seq.pausedUntilS > nowS && (seq.state === 'running' || seq.state === 'waiting'))
        soonest = Math.min(soonest ?? Infinity, seq.pausedUntilS);
    }
    return soonest;
  }

  /** Plans the step starting at `nowS`; undefined when nothing can run. */
  schedule(nowS: number): StepPlan | undefined {
    this.running = this.running.filter((s) => s.state === 'running');
    this.steps += 1;
    this.stepStartS = nowS;
    const plan = emptyPlan();
    let budget = this.config.maxNumBatchedTokens;
    let preempted = false;
    for (let i = 0; i < this.running.length && budget > 0; ) {
      const seq = this.running[i]!;
      if (seq.pausedUntilS > nowS) {
        i += 1;
        continue;
      }
      const tokens = Math.min(numTokens(seq) - seq.computed, budget);
      const outcome = this.makeRoom(seq, tokens, plan);
      if (outcome.preempted) preempted = true;
      budget += outcome.refund;
      i -= outcome.removedBefore;
      if (!outcome.fits) break;
      addToPlan(plan, seq, tokens);
      budget -= tokens;
      i += 1;
    }
    // As in vLLM, a step that had to preempt admits nobody new.
    if (!preempted) budget = this.admitWaiting(plan, budget, nowS);
    if (plan.seqs.length === 0) return undefined;
    plan.durationS = stepDurationS(this.config.profile, plan.shape);
    return plan;
  }

  /** Applies a finished step at `nowS`: advances every scheduled request and emits the tokens due. */
  complete(plan: StepPlan, nowS: number): void {
    for (let i = 0; i < plan.seqs.length; i++) {
      const seq = plan.seqs[i]!;
      if (seq.state !== 'running') continue; // cancelled while the step ran
      seq.computed += plan.tokens[i]!;
      if (this.config.prefixCaching && seq.job.blockHashes)
        this.kv.commit(seq.kv, seq.job.blockHashes, Math.min(seq.computed, seq.job.promptTokens));
      if (seq.computed >= numTokens(seq)) this.emit(seq, nowS);
    }
  }

  private admitWaiting(plan: StepPlan, budget: number, nowS: number): number {
    while (budget > 0 && this.live.running < this.config.maxNumSeqs) {
      const seq = this.waiting.peek(nowS);
      if (!seq) break;
      const total = numTokens(seq);
      const hits =
        this.config.prefixCaching && seq.job.blockHashes ? this.kv.lookup(seq.job.blockHashes, Math.floor((total - 1) / BLOCK_SIZE)) : [];
      // KV received from a prefill replica counts like a cache hit, once: after a preemption it is recomputed.
      const cachedTokens = Math.max(hits.length * BLOCK_SIZE, seq.remoteKv);
      const tokens = Math.min(total - cachedTokens, budget);
      if (!this.kv.admit(seq.kv, hits, cachedTokens + tokens)) break;
      if (this.config.prefixCaching) {
        this.metrics.prefixQueries += total;
        this.metrics.prefixHits += cachedTokens;
        // As vLLM's num_cached_tokens: what the first admission found (a preempted request's re-admission does not change it).
        seq.job.cachedTokens ??= cachedTokens;
      }
      this.waiting.remove(seq);
      this.live.waiting -= 1;
      this.live.running += 1;
      seq.state = 'running';
      seq.computed = cachedTokens;
      seq.remoteKv = 0;
      if (seq.job.trace) {
        const kind = seq.job.trace.journey.some((e) => e.type === 'SCHEDULED') ? 'RESUME' : 'FIRST';
        // A step that catches up on a late timer starts at its due time, which may precede the
        // request's arrival in this engine by up to CATCH_UP_S: the event is never stamped before it.
        note(seq.job, { ...this.event(seq, 'SCHEDULED', Math.max(nowS, seq.arrivalS)), kind });
      }
      this.running.push(seq);
      addToPlan(plan, seq, tokens);
      budget -= tokens;
    }
    return budget;
  }

  // Finds KV room for `tokens` more tokens of `seq`, preempting until it fits or `seq` itself goes.
  private makeRoom(seq: Seq, tokens: number, plan: StepPlan): { fits: boolean; preempted: boolean; refund: number; removedBefore: number } {
    const result = { fits: true, preempted: false, refund: 0, removedBefore: 0 };
    while (!this.kv.grow(seq.kv, seq.computed + tokens)) {
      const victim = this.victim();
      const at = this.running.indexOf(victim);
      if (at < this.running.indexOf(seq)) result.removedBefore += 1;
      result.refund += removeFromPlan(plan, victim);
      this.preempt(victim);
      result.preempted = true;
      if (victim === seq) {
        result.fits = false;
        break;
      }
    }
    return result;
  }

  // FCFS preempts the newest running request; priority the lowest-priority, newest one.
  private victim(): Seq {
    const policy = this.config.scheduling;
    if (policy === 'fcfs') return this.running.at(-1)!;
    return this.running.reduce((worst, s) => (runsBefore(policy, worst, s) ? s : worst));
  }

  private preempt(seq: Seq): void {
    this.leaveRunning(seq);
    this.running.splice(this.running.indexOf(seq), 1);
    if (seq.job.trace) note(seq.job, this.event(seq, 'PREEMPTED', this.stepStartS));
    seq.computed = 0;
    this.metrics.preemptions += 1;
    this.enqueue(seq);
  }

  private enqueue(seq: Seq): void {
    seq.state = 'waiting';
    this.live.waiting += 1;
    this.waiting.push(seq);
  }

  private leaveRunning(seq: Seq): void {
    this.live.running -= 1;
    this.kv.release(seq.kv);
  }

  private emit(seq: Seq, nowS: number): void {
    const { job } = seq;
    const index = seq.generated;
    seq.generated += 1;
    this.metrics.generationTokens += 1;
    if (index === 0) {
      this.metrics.ttft.observe(nowS - seq.arrivalS);
      this.metrics.promptTokens += job.promptTokens;
      if (job.trace) note(job, this.event(seq, 'FIRST_TOKEN', nowS));
    } else {
      this.metrics.itl.observe(nowS - seq.lastTokenS);
    }
    seq.lastTokenS = nowS;
    if (job.pause?.afterTokens === seq.generated) seq.pausedUntilS = nowS + job.pause.ms / 1000;
    job.onToken(index);
    if (seq.state === 'running' && seq.generated >= job.outputTokens) this.finish(seq, nowS);
  }

  private finish(seq: Seq, nowS: number): void {
    this.leaveRunning(seq);
    seq.state = 'done';
    this.metrics.e2e.observe(nowS - seq.arrivalS);
    this.metrics.success[seq.job.finishReason] += 1;
    if (seq.job.trace) note(seq.job, this.event(seq, 'FINISHED', nowS));
    seq.job.onFinish();
  }

  private event(seq: Seq, type: JourneyEventType, atS: number): JourneyEvent {
    const prefillDone = Math.min(seq.computed, seq.job.promptTokens);
    return { type, atS, prefillDone, decodeDone: seq.generated, step: this.steps };
  }
}
