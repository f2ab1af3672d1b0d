// A run's trace receiver (plan.traces): started before the load, it streams every span of this
// run to spans.ndjson as it arrives (matched to its request by trace id or request id) and keeps
// only counts, so memory stays flat however long the run. At the end the run waits for the
// server's last batched exports, then closes it; the join to requests.ndjson reads the file
// (finish.ts).

import { AtomicLineStream } from '../../shared/atomic-file.js';
import { ErrorCode, LoadfleetError } from '../../shared/errors.js';
import { stringifyExact } from '../../shared/json.js';
import type { Plan, TracesSpec } from '../../shared/plan.js';
import { TRACES_DEFAULTS } from '../../shared/plan.js';
import { runTraceTag } from '../../shared/trace-context.js';
import { resourceInstance } from './clock-key.js';
import { latencyOf, matchSpan, spanRole, timesRequest } from './join.js';
import { type ReceiverCounts, startTraceReceiver, type TraceReceiver } from './receiver.js';
import type { OtlpSpan } from './span.js';

/** What the run's receiver took, beyond the receiver's own counts. */
export interface RunTraceCounts extends ReceiverCounts {
  /** Spans naming a request of this run, by how they named it. */
  by_trace_id: number;
  by_request_id: number;
  /** Spans naming no request of this run (another client's traffic, or spans that time no request). */
  foreign: number;
}

const split = (address: string): { host: string; port: number } => {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(address.slice(at + 1)) };
};

/** The receiver of one run and its spans.ndjson. */
export class RunTraces {
  private readonly file: AtomicLineStream;
  private receiver: TraceReceiver | undefined;
  private readonly tag: string;
  private readonly classNames: string[];
  private byTrace = 0;
  private byId = 0;
  private foreign = 0;
  /** Spans that end a request's part on the server (all but a disaggregated prefill instance's). */
  private lastParts = 0;
  /** A disaggregated prefill instance's spans (exported apart from the decode instance's). */
  private prefillParts = 0;
  private lastSpanAt = 0;
  /** The receiver's counts when it closed. */
  private closedCounts: ReceiverCounts | undefined;
  private boundPorts = { http: 0, grpc: 0 };

  private constructor(
    readonly spec: TracesSpec,
    private readonly runId: string,
    plan: Plan,
    dir: string,
  ) {
    this.file = new AtomicLineStream(`${dir}/spans.ndjson`);
    this.tag = runTraceTag(runId);
    this.classNames = plan.classes.map((c) => c.name);
  }

  /** Starts the receiver on the plan's addresses; refuses (throws) when a port is taken. */
  static async start(spec: TracesSpec, runId: string, plan: Plan, dir: string): Promise<RunTraces> {
    const t = new RunTraces(spec, runId, plan, dir);
    const http = split(spec.http ?? TRACES_DEFAULTS.http);
    const grpc = split(spec.grpc ?? TRACES_DEFAULTS.grpc);
    try {
      t.receiver = await startTraceReceiver({
        host: http.host,
        httpPort: http.port,
        grpcHost: grpc.host,
        grpcPort: grpc.port,
        onSpans: (spans) => t.take(spans),
      });
    } catch (err) {
      await t.file.close().catch(() => {});
      throw new LoadfleetError(
        ErrorCode.TRACES_LISTEN,
        `the span receiver cannot listen on traces.http ${spec.http ?? TRACES_DEFAULTS.http} / traces.grpc ${spec.grpc ?? TRACES_DEFAULTS.grpc}: ${(err as Error).message}`,
      );
    }
    return t;
  }

  /**
   * The OTLP/HTTP traces URL a server on this machine exports to (the embedded engine-sim): the
   * full URL, as OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and vLLM's --otlp-traces-endpoint take it for
   * http/protobuf.
   */
  get localHttpEndpoint(): string {
    return `http://127.0.0.1:${this.receiver!.httpPort}/v1/traces`;
  }

  /** The ports actually bound (a plan's port 0 is any free one). */
  ports(): { http: number; grpc: number } {
    if (this.receiver) this.boundPorts = { http: this.receiver.httpPort, grpc: this.receiver.grpcPort };
    return this.boundPorts;
  }

  counts(): RunTraceCounts {
    const received = this.closedCounts ?? this.receiver!.counts();
    return { ...received, by_trace_id: this.byTrace, by_request_id: this.byId, foreign: this.foreign };
  }

  private take(spans: OtlpSpan[]): void {
    this.lastSpanAt = performance.now();
    let text = '';
    for (const s of spans) {
      const key = timesRequest(s) ? matchSpan(s, this.tag, this.runId, this.classNames) : null;
      if (!key) {
        this.foreign++;
        continue;
      }
      if (key.by === 'trace_id') this.byTrace++;
      else this.byId++;
      const role = spanRole(s);
      if (role === 'prefill') this.prefillParts++;
      else this.lastParts++;
      const first = s.events.find((e) => /first.?token/i.test(e.name));
      const { instance, from } = resourceInstance(s.resource);
      text += `${stringifyExact({
        class: this.classNames[key.classIndex],
        request_index: key.requestIndex,
        joined_by: key.by,
        trace_id: s.traceId,
        span_id: s.spanId,
        parent_span_id: s.parentSpanId,
        name: s.name,
        service: typeof s.resource['service.name'] === 'string' ? s.resource['service.name'] : '',
        role,
        instance,
        instance_from: from,
        start_unix_ns: s.startUnixNs,
        end_unix_ns: s.endUnixNs,
        first_token_unix_ns: first ? first.timeUnixNs : null,
        latency_s: latencyOf(s.attributes),
        attributes: s.attributes,
      })}\n`;
    }
    if (text) this.file.write(text);
  }

  /**
   * Waits for the server's last exports: until `expected` requests' last spans have arrived (and as
   * many prefill spans, once a disaggregated prefill instance has sent any: each instance exports
   * on its own), or no span has for `quietMs` (an exporter's batch interval), or plan.traces.flush_s
   * has passed.
   */
  async drain(expected: number, quietMs = 6000): Promise<void> {
    const deadline = performance.now() + (this.spec.flush_s ?? TRACES_DEFAULTS.flush_s) * 1000;
    const started = performance.now();
    for (;;) {
      const now = performance.now();
      const all = this.lastParts >= expected && (this.prefillParts === 0 || this.prefillParts >= expected);
      if (all || now >= deadline) return;
      if (now - Math.max(this.lastSpanAt, started) >= quietMs) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops the receiver and renames spans.ndjson into place. */
  async close(): Promise<void> {
    const r = this.receiver;
    if (!r) return;
    this.closedCounts = r.counts();
    this.receiver = undefined;
    await r.close();
    await this.file.close();
  }
}
