// The end of a run with plan.traces: spans.ndjson joined to requests.ndjson. Three streamed passes
// after the collector has closed: the request spans are read into a table by request; every joined
// successful request bounds its server's clock (server-line.ts, one fit per server instance:
// clock-key.ts); then requests.ndjson is rewritten (atomically) with each request's breakdown in
// the run's clock domain, folded per class and window for run.json, while each request's bounds are
// checked against its fitted clock (the crossings run.json states).
// The table holds only the spans of the run's requests (a few numbers each), for this pass only.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { AtomicLineStream } from '../../shared/atomic-file.js';
import { parseExact, stringifyExact } from '../../shared/json.js';
import { windowsAt } from '../../shared/metrics.js';
import type { Plan } from '../../shared/plan.js';
import { runTraceTag } from '../../shared/trace-context.js';
import { type BreakdownSummary, BreakdownTally } from './breakdown-tally.js';
import { type ClockIdentity, clockIdentity, SERVICE_NAME_CAVEAT } from './clock-key.js';
import { breakdown, firstToken, type RequestSpan } from './join.js';
import type { RunTraceCounts, RunTraces } from './run-traces.js';
import { type BoundCounts, DRIFT_LIMIT_PPM, type JoinedStamps, type ServerClock, ServerClockFit } from './server-line.js';
import { SpanTable } from './span-table.js';

/** run.json `server_spans`. */
export interface ServerSpansSection {
  receiver: RunTraceCounts & { http_port: number; grpc_port: number };
  requests_joined: number;
  requests_without_span: number;
  clocks: Record<string, ServerClockFigures>;
  classes: Record<string, { windows: Record<string, BreakdownSummary> }>;
}

/** What names one server clock in run.json. */
interface ClockNaming {
  service: string;
  instance: string | null;
  keyed_by: ClockIdentity['keyedBy'];
  /** Present when keyed by service.name alone. */
  caveat?: string;
}

/** One server clock in run.json. */
export type ServerClockFigures = ClockNaming &
  (
    | {
        kind: 'fitted';
        model: 'line' | 'drift-unbounded';
        offset_ns: number;
        offset_uncertainty_ns: number;
        /** null: the bounds do not bound the drift (drift_bounded false). */
        drift_ppm: number | null;
        drift_uncertainty_ppm: number | null;
        drift_bounded: boolean;
        drift_range_ppm: [number, number];
        drift_limit_ppm: number;
        slack_ns: number;
        bounds_crossing: number;
        bounds_crossing_max_ns: number;
        end_bounds_crossing: number;
        end_bounds_crossing_max_ns: number;
        bounds: BoundCounts;
        requests: number;
      }
    | { kind: 'inconsistent'; requests: number; reason: string; slack_ns: number; bounds: BoundCounts }
    | { kind: 'none'; requests: 0 }
  );

type Row = Record<string, unknown>;

async function* rows(path: string): AsyncGenerator<{ line: string; row: Row }> {
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) if (line.length > 0) yield { line, row: parseExact<Row>(line) };
}

const big = (v: unknown): bigint | null => (typeof v === 'bigint' ? v : typeof v === 'number' ? BigInt(Math.round(v)) : null);

// The clock key of a spans.ndjson row (a row written before instances were kept has only its service).
function clockOf(row: Row, identities: Map<string, ClockIdentity>): string {
  const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
  const id = clockIdentity(String(row.service ?? ''), str(row.instance), str(row.instance_from));
  if (!identities.has(id.key)) identities.set(id.key, id);
  return id.key;
}

/** The request spans of spans.ndjson, by request. */
async function readSpans(
  path: string,
  plan: Plan,
  runTag: string,
  originNs: bigint,
  identities: Map<string, ClockIdentity>,
): Promise<SpanTable> {
  const table = new SpanTable(runTag, originNs);
  const classIndex = new Map(plan.classes.map((c, i) => [c.name, i]));
  for await (const { row } of rows(path)) {
    const ci = classIndex.get(String(row.class));
    const start = big(row.start_unix_ns);
    if (ci === undefined || typeof row.request_index !== 'number' || start === null) continue;
    table.add({
      classIndex: ci,
      requestIndex: row.request_index,
      joinedBy: String(row.joined_by),
      traceId: String(row.trace_id),
      service: String(row.service ?? ''),
      clock: clockOf(row, identities),
      role: String(row.role),
      startNs: start,
      endNs: big(row.end_unix_ns) ?? start,
      firstTokenNs: big(row.first_token_unix_ns),
      latency: (row.latency_s ?? {}) as Record<string, number>,
    });
  }
  return table;
}

// The stamps a successful request's row gives the join, or null.
function clientOf(row: Row): { sent: bigint; headers: bigint; first: bigint; done: bigint | null; windowNs: bigint } | null {
  const [sent, headers, first] = [big(row.sent_unix_ns), big(row.headers_unix_ns), big(row.first_content_unix_ns)];
  if (row.status !== 'ok' || sent === null || headers === null || first === null) return null;
  return { sent, headers, first, done: big(row.done_unix_ns), windowNs: big(row.intended_unix_ns) ?? sent };
}

const ppm = (v: number): number => Math.round(v * 1e3) / 1e3;

function figures(c: ServerClock, id: ClockIdentity): ServerClockFigures {
  const naming: ClockNaming = {
    service: id.service,
    instance: id.instance,
    keyed_by: id.keyedBy,
    ...(id.keyedBy === 'service.name' ? { caveat: SERVICE_NAME_CAVEAT } : {}),
  };
  if (c.kind === 'none') return { ...naming, ...c };
  if (c.kind === 'inconsistent')
    return { ...naming, kind: c.kind, requests: c.requests, reason: c.reason, slack_ns: Math.ceil(c.slackNs), bounds: c.bounds };
  const t = c.tally();
  return {
    ...naming,
    kind: 'fitted',
    model: c.model,
    offset_ns: Math.round(c.offsetNs),
    offset_uncertainty_ns: Math.ceil(c.uncertaintyNs),
    drift_ppm: c.driftPpm === null ? null : ppm(c.driftPpm),
    drift_uncertainty_ppm: c.driftUncertaintyPpm === null ? null : ppm(c.driftUncertaintyPpm),
    drift_bounded: c.driftPpm !== null,
    drift_range_ppm: [ppm(c.driftRangePpm[0]), ppm(c.driftRangePpm[1])],
    drift_limit_ppm: DRIFT_LIMIT_PPM,
    slack_ns: Math.ceil(c.slackNs),
    bounds_crossing: t.crossing,
    bounds_crossing_max_ns: Math.ceil(t.crossingMaxNs),
    end_bounds_crossing: t.endCrossing,
    end_bounds_crossing_max_ns: Math.ceil(t.endCrossingMaxNs),
    bounds: c.bounds,
    requests: c.requests,
  };
}

// One span's bounds on its clock, from its request's client stamps.
const stampsOf = (c: NonNullable<ReturnType<typeof clientOf>>, s: RequestSpan): JoinedStamps => ({
  sentNs: c.sent,
  headersNs: c.headers,
  firstContentNs: c.first,
  doneNs: c.done,
  serverStartNs: s.startNs,
  serverEndNs: s.endNs,
  serverFirstTokenNs: firstToken(s),
});

/** Joins the run's spans to its requests; rewrites requests.ndjson and returns run.json's section. */
export async function joinServerSpans(opts: {
  dir: string;
  runId: string;
  plan: Plan;
  runStartNs: bigint;
  runEndNs: bigint;
  counts: RunTraceCounts;
  ports: { http: number; grpc: number };
}): Promise<ServerSpansSection> {
  const requestsPath = `${opts.dir}/requests.ndjson`;
  const identities = new Map<string, ClockIdentity>();
  const spans = await readSpans(`${opts.dir}/spans.ndjson`, opts.plan, runTraceTag(opts.runId), opts.runStartNs, identities);
  const classIndex = new Map(opts.plan.classes.map((c, i) => [c.name, i]));
  const lookup = (row: Row) => {
    const ci = classIndex.get(String(row.class));
    return ci === undefined || typeof row.request_index !== 'number' ? undefined : spans.get(ci, row.request_index);
  };
  const length = Math.max(1, Number(opts.runEndNs - opts.runStartNs));
  const fits = new Map<string, ServerClockFit>();
  for await (const { row } of rows(requestsPath)) {
    const j = lookup(row);
    const c = clientOf(row);
    if (!j || !c) continue;
    for (const s of j.spans) {
      const fit = fits.get(s.clock) ?? new ServerClockFit(opts.runStartNs, length);
      fits.set(s.clock, fit);
      fit.add(stampsOf(c, s));
    }
  }
  const clocks = new Map([...fits].map(([service, fit]) => [service, fit.result()]));

  const tallies = new Map<string, Map<string, BreakdownTally>>();
  const out = new AtomicLineStream(requestsPath);
  let joined = 0;
  let without = 0;
  for await (const { line, row } of rows(requestsPath)) {
    const j = lookup(row);
    const c = clientOf(row);
    if (!j) without++;
    if (j && c)
      for (const s of j.spans) {
        const clock = clocks.get(s.clock);
        if (clock?.kind === 'fitted') clock.observe(stampsOf(c, s));
      }
    // A span's clock offset at an instant of its request (its send unless said).
    const offsetAt = (s: RequestSpan, at: bigint | null = c?.sent ?? null): number | null => {
      const clock = clocks.get(s.clock);
      return clock?.kind === 'fitted' && at !== null ? clock.offsetAt(at) : null;
    };
    const b = j && c ? breakdown({ sentNs: c.sent, firstContentNs: c.first }, j.spans, (s) => offsetAt(s)) : null;
    const first = j?.spans.find((s) => s.role !== 'decode') ?? j?.spans[0];
    const last = j?.spans.find((s) => s.role === 'decode') ?? first;
    const clock = first && clocks.get(first.clock);
    const fitted = clock?.kind === 'fitted' ? clock : null;
    const firstOffset = first ? offsetAt(first) : null;
    // The span's end is placed with the offset at the request's last byte (a drifting clock moves over a long request).
    const lastOffset = last ? offsetAt(last, c ? (c.done ?? c.first) : null) : null;
    // The uncertainty at the send itself: the polygon's range there, exact (the clock's is its largest over the run).
    const sendRange = fitted && c ? fitted.rangeAt(c.sent) : null;
    const { ttft_ms: _measured, ...parts } = b ?? {};
    const fields = {
      span_joined_by: j?.by ?? null,
      span_trace_id: j?.traceId ?? null,
      span_services: j ? [...new Set(j.spans.map((s) => s.service))].join(',') : null,
      span_clocks: j ? [...new Set(j.spans.map((s) => s.clock))].join(',') : null,
      span_start_unix_ns: first && firstOffset !== null ? first.startNs - BigInt(Math.round(firstOffset)) : null,
      span_end_unix_ns: last && lastOffset !== null ? last.endNs - BigInt(Math.round(lastOffset)) : null,
      span_offset_ns: firstOffset === null ? null : Math.round(firstOffset),
      span_offset_uncertainty_ns:
        sendRange && firstOffset !== null ? Math.ceil(Math.max(firstOffset - sendRange[0], sendRange[1] - firstOffset)) : null,
      to_server_ms: null,
      queue_ms: null,
      prefill_ms: null,
      unaccounted_ms: null,
      handoff_ms: null,
      kv_transfer_ms: null,
      from_server_ms: null,
      network_ms: null,
      decode_ms: null,
      ...parts,
    };
    // The row's own text is kept byte for byte; the new fields are appended to it.
    out.write(`${line.slice(0, -1)},${stringifyExact(fields).slice(1)}\n`);
    if (!b || !c) continue;
    joined++;
    const byWindow = tallies.get(String(row.class)) ?? new Map<string, BreakdownTally>();
    tallies.set(String(row.class), byWindow);
    for (const w of windowsAt(opts.plan.windows ?? [], Number(c.windowNs - opts.runStartNs))) {
      const t = byWindow.get(w) ?? new BreakdownTally();
      byWindow.set(w, t);
      t.add(b);
    }
  }
  await out.close();
  return {
    receiver: { ...opts.counts, http_port: opts.ports.http, grpc_port: opts.ports.grpc },
    requests_joined: joined,
    requests_without_span: without,
    clocks: Object.fromEntries([...clocks].map(([key, c]) => [key, figures(c, identities.get(key) ?? clockIdentity(key, null, null))])),
    classes: Object.fromEntries(
      opts.plan.classes.map((cls) => [
        cls.name,
        {
          windows: Object.fromEntries([...(tallies.get(cls.name) ?? new Map<string, BreakdownTally>())].map(([w, t]) => [w, t.summary()])),
        },
      ]),
    ),
  };
}

/**
 * The run's last word on spans: waits for the server's last exports (up to `completed` request
 * spans), closes the receiver and joins; a failure of the join costs only its section (logged).
 */
export async function endRunTraces(
  traces: RunTraces,
  opts: { dir: string; runId: string; plan: Plan; runStartNs: bigint; runEndNs: bigint; completed: number; log: (line: string) => void },
): Promise<ServerSpansSection | undefined> {
  await traces.drain(opts.completed);
  const ports = traces.ports();
  await traces.close();
  try {
    return await joinServerSpans({ ...opts, counts: traces.counts(), ports });
  } catch (err) {
    opts.log(`server spans not joined: ${(err as Error).message}`);
    return undefined;
  }
}
