// Disaggregated serving, as llm-d's prefill/decode split runs vLLM: a request is first prefilled on a
// prefill replica (which answers the one token that ends its prefill), its KV cache then moves to a
// decode replica (a stated delay: a fixed part plus a part per prompt token), and the decode replica
// (which recomputes only the prompt's last token, as vLLM does with received KV) streams the whole
// answer. Both replicas are the vLLM model, on the same clock; the client sees only the decode side.
import type { SimClock, TimerHandle } from './clock.js';
import type { EngineJob, EngineTicket, SimEngine } from './job.js';
import type { AbortReason } from './metrics.js';

/** How long one request's KV takes to reach its decode replica. */
export interface KvTransfer {
  fixedS: number;
  perTokenS: number;
}

// Where a request is: on the prefill replica, in transfer (no inner ticket) or on the decode replica.
class PairTicket implements EngineTicket {
  cancelled = false;
  inner: EngineTicket | undefined;
  onDecode = false;
  timer: TimerHandle | undefined;

  get state(): EngineTicket['state'] {
    if (this.cancelled || this.inner?.state === 'cancelled') return 'cancelled';
    if (!this.inner) return 'running';
    // A finished prefill is a request still running.
    return !this.onDecode && this.inner.state === 'done' ? 'running' : this.inner.state;
  }
}

/** One prefill replica and one decode replica serving a request together. */
export class DisaggregatedPair implements SimEngine {
  constructor(
    private readonly prefill: SimEngine,
    private readonly decode: SimEngine,
    private readonly clock: SimClock,
    private readonly transfer: KvTransfer,
  ) {}

  /** Requests in either replica's running batch. */
  get runningCount(): number {
    return this.prefill.runningCount + this.decode.runningCount;
  }

  /** Requests waiting on either side. */
  get waitingCount(): number {
    return this.prefill.waitingCount + this.decode.waitingCount;
  }

  /** The decode side's KV usage (where a request's blocks stay longest). */
  get kvUsage(): number {
    return this.decode.kvUsage;
  }

  /** Prefills `job` on the prefill replica; the rest follows by itself. */
  submit(job: EngineJob): EngineTicket {
    const ticket = new PairTicket();
    const prefillJob: EngineJob = {
      promptTokens: job.promptTokens,
      outputTokens: 1,
      finishReason: 'length',
      ...(job.priority === undefined ? {} : { priority: job.priority }),
      ...(job.blockHashes ? { blockHashes: job.blockHashes } : {}),
      ...(job.trace ? { trace: { journey: [] } } : {}),
      onToken: () => {},
      onFinish: () => {
        // What the prefill replica found in its prefix cache is the request's cached prompt.
        if (prefillJob.cachedTokens !== undefined) job.cachedTokens ??= prefillJob.cachedTokens;
        this.handOver(ticket, job);
      },
    };
    if (job.trace && prefillJob.trace) job.trace.prefill = { arrivalS: this.clock.nowS(), journey: prefillJob.trace.journey };
    ticket.inner = this.prefill.submit(prefillJob);
    return ticket;
  }

  /** Cancels the request wherever it is: prefilling, in transfer or decoding. */
  cancel(ticket: EngineTicket, reason: AbortReason): void {
    const t = ticket as PairTicket;
    if (t.state === 'done' || t.state === 'cancelled') return;
    t.cancelled = true;
    t.timer?.cancel();
    if (t.inner) (t.onDecode ? this.decode : this.prefill).cancel(t.inner, reason);
  }

  /** The replicas are stopped by their pool. */
  stop(): void {}

  // The prefill is done: the KV moves, then the decode replica takes the request with its prompt's KV.
  private handOver(ticket: PairTicket, job: EngineJob): void {
    if (ticket.cancelled) return;
    const nowS = this.clock.nowS();
    const transferS = this.transfer.fixedS + this.transfer.perTokenS * job.promptTokens;
    ticket.inner = undefined;
    if (job.trace) {
      job.trace.decode = { arrivalS: nowS, kvTransferS: transferS };
      // vLLM's decode replica queues the request at once and schedules it when its KV has arrived.
      job.trace.journey.push({ type: 'QUEUED', atS: nowS, prefillDone: 0, decodeDone: 0 });
    }
    ticket.timer = this.clock.at(nowS + transferS, () => {
      ticket.timer = undefined;
      if (ticket.cancelled) return;
      job.remoteKvTokens = Math.max(0, job.promptTokens - 1);
      ticket.onDecode = true;
      ticket.inner = this.decode.submit(job);
    });
  }
}
