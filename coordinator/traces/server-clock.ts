// Pure: the server's clock placed in the run's clock domain from the spans that joined requests.
// Cristian's bound, once per request: the server started its span after the request left the client
// and before the response's first byte reached it, so with θ = server clock − run clock,
//   start_server − headers_client ≤ θ ≤ start_server − sent_client.
// Every joined request narrows the interval; the offset is its midpoint and the uncertainty its
// half-width — a bound that holds whatever the path's asymmetry, tighter with more requests.

/** One joined request's stamps: the client's in the run's clock domain, the span's on the server's clock (Unix ns). */
export interface JoinedStamps {
  sentNs: bigint;
  /** When the response's first byte reached the client. */
  headersNs: bigint;
  serverStartNs: bigint;
}

/** The server's offset from the run's clock, as far as the joined requests bound it. */
export type ServerOffset =
  | { kind: 'bounded'; offsetNs: bigint; uncertaintyNs: bigint; lowNs: bigint; highNs: bigint; requests: number }
  | { kind: 'inconsistent'; lowNs: bigint; highNs: bigint; requests: number; reason: string }
  | { kind: 'none'; requests: 0 };

/** Folds joined requests into the offset interval as they arrive (constant state: two bounds and a count). */
export class ServerOffsetBound {
  private low: bigint | null = null;
  private high: bigint | null = null;
  private n = 0;

  add(s: JoinedStamps): void {
    const lo = s.serverStartNs - s.headersNs;
    const hi = s.serverStartNs - s.sentNs;
    if (hi < lo) return; // headers before the send: not a valid stamp pair, bounds nothing
    this.low = this.low === null || lo > this.low ? lo : this.low;
    this.high = this.high === null || hi < this.high ? hi : this.high;
    this.n++;
  }

  result(): ServerOffset {
    if (this.n === 0 || this.low === null || this.high === null) return { kind: 'none', requests: 0 };
    if (this.low > this.high)
      return {
        kind: 'inconsistent',
        lowNs: this.low,
        highNs: this.high,
        requests: this.n,
        reason: `no single offset fits every request (the bounds cross by ${Number(this.low - this.high) / 1e6} ms): the server's clock drifted or stepped during the run, or its spans do not start when the request arrives`,
      };
    const width = this.high - this.low;
    return {
      kind: 'bounded',
      offsetNs: this.low + width / 2n,
      uncertaintyNs: (width + 1n) / 2n,
      lowNs: this.low,
      highNs: this.high,
      requests: this.n,
    };
  }
}
