// The run's request spans by request, for the end-of-run join: a few numbers per span (times
// relative to the run's start, the five latencies the breakdown reads, the service, clock and role by
// index) in one growable array instead of the parsed rows, so a long run's table stays small.
import { traceIdOf } from '../../shared/trace-context.js';
import type { RequestSpan } from './join.js';

/** A request's spans, in timeline order (a prefill instance's before a decode instance's). */
export interface Joined {
  by: string;
  traceId: string;
  spans: RequestSpan[];
}

const ROLES = ['prefill', 'aggregate', 'decode'] as const;
const LATENCIES = ['time_in_queue', 'time_in_model_prefill', 'time_to_first_token', 'time_in_model_decode', 'kv_transfer'] as const;
// Per span: service, role, start, end, first token, then the latencies (NaN: absent), in one growable array.
const WIDTH = 5 + LATENCIES.length;

/** One parsed spans.ndjson row, as far as the table needs it. */
export interface SpanRowIn {
  classIndex: number;
  requestIndex: number;
  joinedBy: string;
  traceId: string;
  service: string;
  /** The span's clock (clock-key.ts): its server instance, else its service. */
  clock: string;
  role: string;
  startNs: bigint;
  endNs: bigint;
  firstTokenNs: bigint | null;
  latency: Record<string, number>;
}

export class SpanTable {
  /** Every span's record, WIDTH numbers and the position of the request's next span (-1: none). */
  private store = new Float64Array(WIDTH * 1024);
  private used = 0;
  /** Per class: request index → its first span's position. */
  private readonly byClass: Map<number, number>[] = [];
  /** A request joined otherwise than by the trace id it carried: how, and its span's trace id. */
  private readonly otherwise = new Map<number, { by: string; traceId: string }>();
  /** Each distinct service and clock, by position. */
  private readonly sources: { service: string; clock: string }[] = [];
  private readonly sourceIndex = new Map<string, number>();

  constructor(
    private readonly runTag: string,
    private readonly originNs: bigint,
  ) {}

  add(r: SpanRowIn): void {
    const byIndex = this.byClass[r.classIndex] ?? new Map<number, number>();
    this.byClass[r.classIndex] = byIndex;
    const id = `${r.service}\u0000${r.clock}`;
    let service = this.sourceIndex.get(id);
    if (service === undefined) {
      service = this.sources.push({ service: r.service, clock: r.clock }) - 1;
      this.sourceIndex.set(id, service);
    }
    if (this.used + WIDTH + 1 > this.store.length) {
      const grown = new Float64Array(this.store.length * 2);
      grown.set(this.store);
      this.store = grown;
    }
    const at = this.used;
    this.used += WIDTH + 1;
    const rel = (ns: bigint | null): number => (ns === null ? Number.NaN : Number(ns - this.originNs));
    const v = this.store;
    v.set([service, Math.max(0, ROLES.indexOf(r.role as (typeof ROLES)[number])), rel(r.startNs), rel(r.endNs), rel(r.firstTokenNs)], at);
    LATENCIES.forEach((k, j) => {
      v[at + 5 + j] = typeof r.latency[k] === 'number' ? r.latency[k]! : Number.NaN;
    });
    v[at + WIDTH] = -1;
    const first = byIndex.get(r.requestIndex);
    if (first === undefined) {
      byIndex.set(r.requestIndex, at);
      // A span joined by trace id has the id the request carried (recomputed on read); others keep theirs.
      if (r.joinedBy !== 'trace_id' || r.traceId !== traceIdOf(this.runTag, r.classIndex, r.requestIndex))
        this.otherwise.set(at, { by: r.joinedBy, traceId: r.traceId });
      return;
    }
    let last = first;
    while (v[last + WIDTH]! >= 0) last = v[last + WIDTH]!;
    v[last + WIDTH] = at;
  }

  get(classIndex: number, requestIndex: number): Joined | undefined {
    const first = this.byClass[classIndex]?.get(requestIndex);
    if (first === undefined) return undefined;
    const how = this.otherwise.get(first) ?? { by: 'trace_id', traceId: traceIdOf(this.runTag, classIndex, requestIndex) };
    const spans: RequestSpan[] = [];
    const v = this.store;
    const abs = (x: number): bigint | null => (Number.isNaN(x) ? null : this.originNs + BigInt(x));
    for (let i = first; i >= 0; i = v[i + WIDTH]!) {
      const latency: Record<string, number> = {};
      LATENCIES.forEach((k, j) => {
        if (!Number.isNaN(v[i + 5 + j]!)) latency[k] = v[i + 5 + j]!;
      });
      spans.push({
        ...this.sources[v[i]!]!,
        role: ROLES[v[i + 1]!]!,
        startNs: abs(v[i + 2]!)!,
        endNs: abs(v[i + 3]!)!,
        firstTokenNs: abs(v[i + 4]!),
        latency,
      });
    }
    spans.sort((a, b) => ROLES.indexOf(a.role) - ROLES.indexOf(b.role));
    return { ...how, spans };
  }
}
