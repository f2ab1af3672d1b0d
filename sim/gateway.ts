// Flow control in front of the pool, after the inference gateway's: requests are admitted while
// the pool's in-flight count is below max_concurrency·(1 + headroom); past that they queue by
// priority band (strictly higher bands first) and, within a band, round robin across fairness
// ids; a request that waits past the queue timeout, or finds the queue full, is dropped (429).
import type { SimClock, TimerHandle } from './clock.js';
import type { GatewayMetrics } from './gateway-metrics.js';

/** Admission limits of the pool. */
export interface GatewayLimits {
  /** In-flight requests at saturation 1.0 (the sum over replicas). */
  maxConcurrency: number;
  /** Extra share admitted beyond saturation 1.0. */
  headroom: number;
  /** Longest wait in the queue before a request is dropped. */
  queueTimeoutS: number;
  /** Most requests queued at once; more are dropped on arrival. */
  queueCapacity: number;
}

/** Why a request was dropped, as sent in `x-llm-d-request-dropped-reason`. */
export type DropReason = 'rejected-saturated' | 'rejected-ttl-expired';

/** A request asking for admission. */
export interface FlowRequest {
  fairnessId: string;
  priority: number;
  /** Request size, for the queue-bytes gauge. */
  bytes: number;
  /** Admitted: start serving now. */
  dispatch(): void;
  /** Dropped before dispatch. */
  reject(reason: DropReason): void;
}

/** A request's place in flow control; hand it back to done() when its response is over. */
export interface FlowTicket {
  state: 'queued' | 'dispatched' | 'closed';
  readonly request: FlowRequest;
  readonly enqueuedS: number;
  timer: TimerHandle | undefined;
}

interface Flow {
  fairnessId: string;
  items: FlowTicket[];
  head: number;
}

interface Band {
  priority: number;
  flows: Flow[];
  /** Index of the flow served next (round robin). */
  cursor: number;
}

/** The flow controller of one pool. */
export class Gateway {
  private inFlight = 0;
  private queued = 0;
  private pumping = false;
  // Bands by descending priority.
  private readonly bands: Band[] = [];
  private readonly limit: number;

  constructor(
    private readonly limits: GatewayLimits,
    private readonly clock: SimClock,
    private readonly metrics: GatewayMetrics,
  ) {
    this.limit = Math.floor(limits.maxConcurrency * (1 + limits.headroom) + 1e-9);
  }

  /** In-flight requests over max_concurrency: 1.0 is saturated. */
  get saturation(): number {
    return this.inFlight / this.limits.maxConcurrency;
  }

  /** Requests waiting in the queue. */
  get queuedCount(): number {
    return this.queued;
  }

  /** Admits `request` now, queues it, or drops it. */
  submit(request: FlowRequest): FlowTicket {
    const ticket: FlowTicket = { state: 'queued', request, enqueuedS: this.clock.nowS(), timer: undefined };
    this.metrics.seen(request.fairnessId, request.priority);
    if (this.queued === 0 && this.inFlight < this.limit) {
      this.dispatch(ticket);
      return ticket;
    }
    if (this.queued >= this.limits.queueCapacity) {
      this.close(ticket, 'RejectedCapacity');
      request.reject('rejected-saturated');
      return ticket;
    }
    this.flow(request).items.push(ticket);
    this.queued += 1;
    this.metrics.queueChange(request.fairnessId, request.priority, 1, request.bytes);
    ticket.timer = this.clock.at(ticket.enqueuedS + this.limits.queueTimeoutS, () => this.expire(ticket));
    this.pump();
    return ticket;
  }

  /** The request's response is over: frees its slot, or removes it from the queue if still there. */
  done(ticket: FlowTicket): void {
    if (ticket.state === 'dispatched') {
      ticket.state = 'closed';
      this.inFlight -= 1;
      this.pump();
    } else if (ticket.state === 'queued') {
      this.unqueue(ticket);
      this.close(ticket, 'EvictedContextCancelled');
    }
  }

  private expire(ticket: FlowTicket): void {
    if (ticket.state !== 'queued') return;
    this.unqueue(ticket);
    this.close(ticket, 'EvictedTTL');
    ticket.request.reject('rejected-ttl-expired');
  }

  private pump(): void {
    if (this.pumping) return; // a dispatch that finishes at once re-enters here; the loop below goes on
    this.pumping = true;
    try {
      while (this.queued > 0 && this.inFlight < this.limit) {
        const ticket = this.next();
        this.unqueue(ticket);
        this.dispatch(ticket);
      }
    } finally {
      this.pumping = false;
    }
  }

  private dispatch(ticket: FlowTicket): void {
    ticket.timer?.cancel();
    ticket.state = 'dispatched';
    this.inFlight += 1;
    this.metrics.outcome(ticket.request.fairnessId, ticket.request.priority, 'Dispatched', this.clock.nowS() - ticket.enqueuedS);
    ticket.request.dispatch();
  }

  private close(ticket: FlowTicket, outcome: 'RejectedCapacity' | 'EvictedTTL' | 'EvictedContextCancelled'): void {
    ticket.timer?.cancel();
    ticket.state = 'closed';
    this.metrics.outcome(ticket.request.fairnessId, ticket.request.priority, outcome, this.clock.nowS() - ticket.enqueuedS);
  }

  // The head of the next flow in round robin within the highest non-empty band.
  private next(): FlowTicket {
    for (const band of this.bands) {
      for (let k = 0; k < band.flows.length; k++) {
        const i = (band.cursor + k) % band.flows.length;
        const flow = band.flows[i]!;
        skipClosed(flow);
        if (flow.head < flow.items.length) {
          band.cursor = (i + 1) % band.flows.length;
          return flow.items[flow.head]!;
        }
      }
    }
    throw new Error('gateway queue count is positive but every flow is empty');
  }

  // Takes a queued ticket out of the counts; its slot in the flow's array is skipped lazily.
  private unqueue(ticket: FlowTicket): void {
    ticket.state = 'closed';
    this.queued -= 1;
    this.metrics.queueChange(ticket.request.fairnessId, ticket.request.priority, -1, -ticket.request.bytes);
  }

  private flow(request: FlowRequest): Flow {
    let band = this.bands.find((b) => b.priority === request.priority);
    if (!band) {
      band = { priority: request.priority, flows: [], cursor: 0 };
      this.bands.push(band);
      this.bands.sort((a, b) => b.priority - a.priority);
    }
    let flow = band.flows.find((f) => f.fairnessId === request.fairnessId);
    if (!flow) {
      flow = { fairnessId: request.fairnessId, items: [], head: 0 };
      band.flows.push(flow);
    }
    return flow;
  }
}

// Drops closed tickets off the front of a flow, compacting now and then.
function skipClosed(flow: Flow): void {
  while (flow.head < flow.items.length && flow.items[flow.head]!.state !== 'queued') flow.head += 1;
  if (flow.head > 256 && flow.head * 2 > flow.items.length) {
    flow.items = flow.items.slice(flow.head);
    flow.head = 0;
  }
}
