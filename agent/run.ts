// One agent's part of one run: prepare its stripes, start at the shared instant, send requests,
// stream records (with an ack window, so memory stays bounded by what the coordinator has not
// yet taken) and interval histograms, then hand over the run histograms.
import { type EventLoopUtilization, monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Agent as UndiciAgent } from 'undici';
import { classApi } from '../shared/api-kinds.js';
import type { Clock } from '../shared/clock.js';
import { perfOffsetToHrtime } from '../shared/clock.js';
import { ErrorCode, LoadfleetError } from '../shared/errors.js';
import { newHistogram, nsToMs, percentilesNs, recordNs } from '../shared/histogram.js';
import { loraPicker } from '../shared/lora.js';
import type { RequestRecord } from '../shared/metrics.js';
import type { Plan, Target, TrafficClass } from '../shared/plan.js';
import { PLAN_DEFAULTS } from '../shared/plan.js';
import type { AgentHealth, AgentMessage, WarmUp } from '../shared/protocol.js';
import { variesPerRequest } from '../shared/request-shape.js';
import { buildSchedule } from '../shared/schedule.js';
import type { ClassStripe, Share } from '../shared/shares.js';
import { takeStripe } from '../shared/shares.js';
import { loadTokenizerFile } from '../shared/tokenizer-file.js';
import { runTraceTag, traceparentOf } from '../shared/trace-context.js';
import { AfterReads } from './after-reads.js';
import type { ApiAdapter } from './api/adapter.js';
import { apiAuthHeaders, endpointPaths } from './api/adapter.js';
import { API_ADAPTERS, adapterFor, fillImages } from './api/index.js';
import type { PreparedRequest, RequestResult } from './client.js';
import { prepareRequest } from './client.js';
import { Conversations } from './conversations.js';
import { ClassImages } from './images.js';
import { runClosedLoop } from './load/closed-loop.js';
import { runOpenLoop } from './load/open-loop.js';
import { loopBusy } from './loop-busy.js';
import { metronome } from './metronome.js';
import { BATCH_ROWS } from './outbox.js';
import { PromptBuilder } from './prompt.js';
import { RecordSample } from './record-sample.js';
import { Recorder } from './recorder.js';
import type { ShareRunner, SpoolTarget } from './share-runner.js';
import { SlewTimeline } from './slew-timeline.js';
import { Spool } from './spool.js';
import { StallLog } from './stall-log.js';
import { sleepUntil } from './timing.js';
import { WorkloadPromptBuilder } from './workload-prompt.js';

/** monitorEventLoopDelay samples with a timer of this period and records the whole period. */
const EVENT_LOOP_RESOLUTION_MS = 10;

// A sample is the timer's whole period; the event-loop delay is how late it fired beyond that.
function lateness(sampleNs: number): number {
  return nsToMs(Math.max(0, (sampleNs || 0) - EVENT_LOOP_RESOLUTION_MS * 1e6));
}
const RECORD_FLUSH_MS = 250;
/**
 * Rows that go out at once, before the flush timer: a batch's encoding is one block of the loop
 * (~5–17 µs a row), and 250 ms of rows at 1,000 requests/s held it for milliseconds, delaying every
 * send and first-token read due meanwhile. Small batches keep each block well under a millisecond;
 * at low rates the timer still sends a few batches a second.
 */
const SEND_AT_ROWS = 64;
/** The warm-up's bound: a target that has not answered /models in this long is not reachable from here. */
const WARM_UP_TIMEOUT_MS = 15_000;

/** A network error in the words that name its cause (undici wraps the system's: ECONNREFUSED, ENOTFOUND, a certificate). */
export function describeNetError(err: unknown): string {
  const e = err as Error & { code?: string; cause?: Error & { code?: string } };
  if (e?.name === 'TimeoutError') return `no answer within ${WARM_UP_TIMEOUT_MS / 1000} s`;
  const cause = e?.cause;
  const inner = cause?.message && cause.message !== e.message ? `: ${cause.message}` : '';
  return `${e?.message ?? String(err)}${inner}`;
}

/** What a class's requests are built from: an id for x-request-id, a body, and a canary marker (or null). */
type RequestPrompts = Pick<PromptBuilder, 'requestId' | 'body' | 'marker'>;

// A workload class names its requests by their head and carries no canary (canaries need calibration).
function workloadPrompts(b: WorkloadPromptBuilder): RequestPrompts {
  return { requestId: (i) => b.requestId(i), body: (i) => b.body(i), marker: () => null };
}

// A class with prompt.images: each body's image markers become the request's images.
function withImages(seed: number, cls: TrafficClass, prompts: RequestPrompts): RequestPrompts {
  if (!cls.prompt.images) return prompts;
  const images = new ClassImages(seed, cls.name, cls.prompt.images);
  return {
    requestId: (i) => prompts.requestId(i),
    marker: (i) => prompts.marker(i),
    body: (i) => fillImages(prompts.body(i), images.dataUris(i)),
  };
}

interface ClassRuntime {
  cls: TrafficClass;
  stripe: ClassStripe;
  prompts: RequestPrompts;
  /** Model `sessions`: the class's conversations (each turn's body is built from its history). */
  conversations?: Conversations;
  headers: Record<string, string>;
  /** The class's API (class.api, else target.api) and where its requests go. */
  adapter: ApiAdapter;
  path: string;
  /** A class with LoRA adapters: the model name of each request (shared/lora.ts). */
  modelOf?: (requestIndex: number) => string;
  /** The class's position in the plan: part of each request's trace id. */
  index: number;
}

/** Executes one share of one plan. */
export class AgentRun implements ShareRunner {
  private readonly classes: ClassRuntime[];
  private readonly target: Target;
  private readonly origin: string;
  /** `{base}/models`, the read-only warm-up request. */
  private readonly modelsPath: string;
  private readonly commonHeadersValue: Record<string, string>;
  private readonly dispatcher = new UndiciAgent({ connections: null, pipelining: 1, keepAliveTimeout: 30_000 });
  private readonly stopper = new AbortController();
  private readonly eventLoop = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
  private readonly stallLog = new StallLog();
  private readonly lag = newHistogram();
  private readonly cpuStart = process.cpuUsage();
  /** Event-loop utilisation is counted from the start instant (preparation is not load). */
  private eluStart: EventLoopUtilization | undefined;
  private recorder: Recorder | undefined;
  /** The start instant as performance.now() × 1e6 (see nowNs). */
  private startPerfNs = 0;
  /** Finished requests wait here for their bookkeeping until the current poll's reads are stamped. */
  private readonly finishing = new AfterReads<RequestResult>((batch) => this.record(batch));
  private rows: RequestRecord[] = [];
  private sent = 0;
  private done = 0;
  private errors = 0;
  private inFlight = 0;
  private timers: NodeJS.Timeout[] = [];
  private spool: Spool | undefined;
  private linkGone = false;
  /** The plan's tokenizer file, when this agent has it: counts output the server did not count. */
  private countOutput: ((text: string) => number) | null = null;
  /** Why the process ended this run early (SIGTERM), if it did. */
  private terminated: string | undefined;
  /** With plan.records.sample_every: which records go out, and the counts of every one. */
  private readonly sample: RecordSample | null;
  /** With plan.traces: the run's trace tag, so each request carries a traceparent naming it; null otherwise. */
  private readonly traceTag: string | null;
  private warmUpResult: WarmUp | undefined;

  constructor(
    runId: string,
    private readonly plan: Plan,
    private readonly share: Share,
    private readonly clock: Clock,
    private readonly send: (m: AgentMessage) => void,
    /** Agents of the fleet (a worker thread's share counts threads too): the sampling rule's stride. */
    fleetAgents = share.count,
  ) {
    this.sample = RecordSample.of(plan, fleetAgents);
    this.traceTag = plan.traces ? runTraceTag(runId) : null;
    if (!plan.target) throw new LoadfleetError(ErrorCode.INTERNAL, 'the coordinator sent a plan without a resolved target');
    this.target = plan.target;
    // Only the origin and the models path are read here; each class has its own API path.
    ({ origin: this.origin, modelsPath: this.modelsPath } = endpointPaths(plan.target.base_url, API_ADAPTERS.chat));
    const schedule = buildSchedule(plan);
    const commonHeaders = this.commonHeaders(plan.target);
    // Each API carries the key in its own headers (Bearer, x-api-key): the warm-up as the target's, each class as its own.
    const key = this.apiKey(plan.target);
    this.commonHeadersValue = { ...commonHeaders, ...apiAuthHeaders(plan.target.api, key) };
    this.classes = plan.classes.map((cls, i) => {
      const adapter = adapterFor(classApi(cls, plan.target), cls);
      const runtime = {
        cls,
        index: i,
        stripe: takeStripe(schedule.classes[i]!, share, i),
        headers: { ...commonHeaders, ...apiAuthHeaders(classApi(cls, plan.target), key), ...(cls.headers ?? {}) },
        adapter,
        path: endpointPaths(plan.target!.base_url, adapter, plan.target!.model).path,
      };
      if (cls.load.model === 'sessions') {
        // A turn's body comes from its conversation; the builder only names its requests.
        const conversations = new Conversations(runId, plan, cls, schedule.classes[i]!, adapter, this.target.model, plan.duration_s * 1e9);
        const prompts: RequestPrompts = {
          requestId: (idx) => conversations.requestId(idx),
          body: () => conversations.noBody(),
          marker: () => null,
        };
        return { ...runtime, prompts, conversations };
      }
      // Classes whose requests differ build each body from its own shape (workload-prompt.ts); the
      // rest use the calibrated builder. A class with LoRA adapters has one builder per model name.
      const build = (model: string): RequestPrompts =>
        variesPerRequest(cls)
          ? workloadPrompts(new WorkloadPromptBuilder(runId, plan, cls, schedule.classes[i]!, classApi(cls, this.target), model))
          : new PromptBuilder(runId, cls, adapter, model, plan.seed, plan.prompt_calibration?.[cls.name]);
      const picker = loraPicker(plan.seed, cls);
      if (!picker) return { ...runtime, prompts: withImages(plan.seed, cls, build(this.target.model)) };
      const builders = picker.adapters.map((a) => build(a.model));
      const prompts: RequestPrompts = withImages(plan.seed, cls, {
        requestId: (idx) => builders[picker.at(idx)]!.requestId(idx),
        body: (idx) => builders[picker.at(idx)]!.body(idx),
        marker: (idx) => builders[picker.at(idx)]!.marker(idx),
      });
      return { ...runtime, prompts, modelOf: (idx: number) => picker.modelAt(idx) };
    });
  }

  /**
   * Touches the target once before the start (GET {base}/models, read-only): undici compiles its
   * HTTP parser on the first connection, which otherwise stalls the first scheduled sends by
   * ~100 ms. Its outcome goes to the coordinator in `prepared`, which stops the run before any
   * load when too many agents got no answer (coordinator/run/reachability.ts).
   */
  private async touchTarget(): Promise<string> {
    const url = `${this.origin}${this.modelsPath}`;
    const t0 = performance.now();
    const took = (): number => Math.round((performance.now() - t0) * 10) / 10;
    try {
      const res = await this.dispatcher.request({
        origin: this.origin,
        path: this.modelsPath,
        method: 'GET',
        headers: this.commonHeadersValue,
        signal: AbortSignal.timeout(WARM_UP_TIMEOUT_MS),
      });
      this.warmUpResult = { url, status: res.statusCode, error: null, latency_ms: took() };
      await res.body.dump();
      return `warm-up GET ${this.modelsPath}: HTTP ${res.statusCode}`;
    } catch (err) {
      const error = describeNetError(err);
      this.warmUpResult = { url, status: null, error, latency_ms: took() };
      return `warm-up GET ${this.modelsPath} failed: ${error}`;
    }
  }

  /** The warm-up's outcome, once prepare() has run. */
  warmUp(): WarmUp | undefined {
    return this.warmUpResult;
  }

  /** Requests this agent will send on the open-loop classes (closed loop is open-ended). */
  plannedRequests(): number {
    return this.classes.reduce((n, c) => n + c.stripe.arrivalsNs.length, 0);
  }

  /**
   * ns since the shared start instant on this agent's monotonic clock, read as a float (no BigInt
   * per chunk; shared/clock.ts perfOffsetToHrtime says why that is the same clock).
   */
  private readonly nowNs = (): number => Math.round(this.timeline.at(performance.now() * 1e6 - this.startPerfNs));
  /** The run timeline: the raw clock slewed onto the coordinator's (slew-timeline.ts). */
  private readonly timeline = new SlewTimeline();

  /** The correction applied so far (ns the run timeline is behind the raw clock). */
  private correctionNs(): number {
    return this.timeline.correctionAtRaw(performance.now() * 1e6 - this.startPerfNs);
  }

  /** The correction applied so far, once the run has armed (a probe reply carries it). */
  clockCorrectionNs(): number | undefined {
    return this.recorder === undefined ? undefined : this.correctionNs();
  }

  /** Slews from now on at `ratePpm` (the correction is continuous where the rate changes). */
  slew(ratePpm: number): void {
    if (this.recorder === undefined) return; // the run's clock starts at start()
    this.timeline.slew(performance.now() * 1e6 - this.startPerfNs, ratePpm);
  }

  /** Waits for the start instant (given in this agent's wall clock), runs to the end, sends `final`. */
  async start(startLocalNs: bigint): Promise<void> {
    const startMono = process.hrtime.bigint() + (startLocalNs - this.clock.nowNs());
    this.startPerfNs = Number(startMono) - perfOffsetToHrtime().offsetNs;
    this.recorder = new Recorder(this.plan.windows ?? [], this.nowNs, (second, classes) =>
      this.send({ type: 'interval', second, classes }),
    );
    await sleepUntil(this.nowNs, 0);
    loopBusy.settle(); // preparing the run is not part of any stamp's bound
    this.send({ type: 'started', first_send_error_ns: this.nowNs() });
    this.eventLoop.enable();
    this.stallLog.start(() => Math.floor(Math.max(0, this.nowNs()) / 1e9));
    this.eluStart = performance.eventLoopUtilization();
    this.every(1000, () => this.heartbeat());
    this.every(RECORD_FLUSH_MS, () => this.flushRecords());
    this.every(250, () => this.recorder!.rotate());
    const drainNs = (this.plan.duration_s + (this.plan.drain_timeout_s ?? PLAN_DEFAULTS.drain_timeout_s)) * 1e9;
    const drainTimer = setTimeout(() => this.stop('drain timeout reached'), Math.max(0, (drainNs - this.nowNs()) / 1e6));
    await Promise.all(this.classes.map((c) => this.runClass(c)));
    while (this.inFlight > 0) await new Promise((r) => setTimeout(r, 20));
    clearTimeout(drainTimer);
    await this.finish();
  }

  /** Opens the spool every finished request is also appended to (spool.ts), then warms up. */
  async prepare(spool: SpoolTarget, part = ''): Promise<string> {
    metronome(); // its thread starts now, to be up by the start instant (timing.ts)
    // A spool that cannot be written (a full disk, an I/O error) stops the load: what is finished
    // from then on would live only in memory, lost with the process. What was finished goes over
    // the link as usual, and `final` says why the share is short (the coordinator records it).
    // (The session logs the reason when `final` carries it.)
    this.spool = await Spool.open(spool.dir, spool.header, part, (err) => this.terminate(`error ${err.code}: ${err.message}`));
    return [await this.touchTarget(), await this.loadTokenizer()].filter(Boolean).join('; ');
  }

  // The tokenizer file is optional on an agent: without it, output without usage is counted in chunks.
  private async loadTokenizer(): Promise<string> {
    const path = this.target.tokenizer;
    if (!path) return '';
    try {
      this.countOutput = (await loadTokenizerFile(path)).countOutput;
      return `tokenizer ${path} loaded for output without usage`;
    } catch (err) {
      return `tokenizer not loaded, output without usage is counted in chunks: ${(err as Error).message}`;
    }
  }

  /** The run was aborted before it started: nothing to hand over, so the spool goes. */
  async discardSpool(): Promise<void> {
    await this.spool?.close(true);
  }

  /** The coordinator is gone (closed or silent): stop; no `final` follows (the spool is kept). */
  linkLost(reason: string): void {
    this.linkGone = true;
    this.stop(reason);
  }

  /** See ShareRunner.terminate. */
  terminate(reason: string): void {
    if (this.stopper.signal.aborted) return;
    this.terminated = reason;
    this.stop(reason);
  }

  /** Stops sending; requests in flight end as `aborted`. */
  stop(reason: string): void {
    if (!this.stopper.signal.aborted) this.stopper.abort(new Error(reason));
  }

  private runClass(c: ClassRuntime): Promise<void> {
    const signal = this.stopper.signal;
    if (c.conversations)
      return c.conversations.run(
        c.stripe,
        (idx, intended, body, session) => this.launch(c, idx, intended, { body, session }),
        this.nowNs,
        signal,
      );
    if (c.stripe.closedLoop)
      return runClosedLoop(c.stripe, this.share, this.nowNs, (idx, done) => this.dispatchOne(c, idx, null, undefined, done), signal);
    return runOpenLoop(c.stripe, this.nowNs, (idx, intended) => this.prepareOne(c, idx, intended), signal);
  }

  /** Sends one session turn (its own body; the reply text comes back with the result). */
  private launch(
    c: ClassRuntime,
    requestIndex: number,
    intendedNs: number | null,
    turn: { body: string; session: { session_id: number; turn: number } },
  ): Promise<RequestResult> {
    return new Promise((resolve) => this.dispatchOne(c, requestIndex, intendedNs, turn, resolve));
  }

  // The request's own headers: its id, and with plan.traces its W3C traceparent. Without traces
  // the object is built exactly as before (one null check more); with them a request costs about
  // 1.5 µs more to build (measured on a 2-core EPYC VM, Node 20: 1.3 against 2.9 µs).
  private requestHeaders(c: ClassRuntime, requestIndex: number): Record<string, string> {
    const id = c.prompts.requestId(requestIndex);
    if (this.traceTag === null) return { ...c.headers, 'x-request-id': id };
    return { ...c.headers, 'x-request-id': id, traceparent: traceparentOf(this.traceTag, c.index, requestIndex) };
  }

  // Sends one request; `then` (if any) follows its bookkeeping. No promise per request: open
  // streams are the agent's memory (client.ts startRequest).
  private dispatchOne(
    c: ClassRuntime,
    requestIndex: number,
    intendedNs: number | null,
    turn?: { body: string; session: { session_id: number; turn: number } },
    then?: (r: RequestResult) => void,
  ): void {
    this.prepareOne(c, requestIndex, intendedNs, turn, then)();
  }

  // Builds one request (its body, headers, record and parser) and returns what sends it: the
  // stamp, the dispatch and the counts, nothing else. The open loop builds the next request while
  // it waits for its instant, so none of this lies between the instant and the send.
  private prepareOne(
    c: ClassRuntime,
    requestIndex: number,
    intendedNs: number | null,
    turn?: { body: string; session: { session_id: number; turn: number } },
    then?: (r: RequestResult) => void,
  ): () => void {
    let sentCorrectionNs: number | null = null;
    // Dropped once sent: the completion closure below shares this scope, and an open stream must
    // not keep its body and headers alive (docs/performance.md, memory per stream).
    let request: PreparedRequest | undefined = prepareRequest(
      this.dispatcher,
      c.adapter,
      {
        className: c.cls.name,
        requestIndex,
        intendedNs,
        origin: this.origin,
        path: c.path,
        headers: this.requestHeaders(c, requestIndex),
        body: turn ? turn.body : c.prompts.body(requestIndex),
        timeoutMs: this.target.timeout_s * 1000,
        requireUsage: this.target.require_usage ?? false,
        countOutput: this.countOutput,
        canaryMarker: c.prompts.marker(requestIndex),
        ...(turn && { captureContent: true }),
        ...(c.modelOf && { model: c.modelOf(requestIndex) }),
        ...(c.cls.prompt.tools && { tools: true }),
        ...(c.cls.prompt.images && { stateBytes: true }),
      },
      this.nowNs,
      this.stopper.signal,
      (result) => {
        if (turn) Object.assign(result.record, turn.session);
        const r = result.record;
        r.clock_correction_ns = Math.round(sentCorrectionNs ?? this.timeline.correctionAt(r.sent_ns));
        r.clock_correction_done_ns = r.done_ns === null ? null : Math.round(this.timeline.correctionAt(r.done_ns));
        this.completed(result);
        then?.(result);
      },
    );
    const className = c.cls.name;
    return () => {
      this.inFlight++;
      this.sent++;
      this.recorder!.issued(className, intendedNs === null ? null : this.nowNs() - intendedNs);
      const sending = request!;
      request = undefined;
      sending.send();
      // sent_ns was stamped synchronously just now, on the same slew segment: its correction, so the
      // raw clock reading stays recoverable (requests.ndjson clock_correction_ns). A request that
      // failed before it returned (its callback ran already) took the correction at its own stamp.
      sentCorrectionNs = this.timeline.correctionAt(this.nowNs());
      loopBusy.settle(); // building and writing a request is no stamp's delay (loop-busy.ts)
    };
  }

  private completed(result: RequestResult): void {
    this.inFlight--;
    this.done++;
    if (result.record.status !== 'ok') this.errors++;
    this.finishing.push(result);
  }

  // A batch of finished requests, after the reads of their poll phase (after-reads.ts): into the
  // histograms, the spool (one write) and the next record batch.
  private record(batch: readonly RequestResult[]): void {
    for (const { record, contentGaps } of batch) {
      if (record.intended_ns !== null) recordNs(this.lag, record.sent_ns - record.intended_ns);
      this.recorder!.finished(record, contentGaps.view());
      // Sampled records: every request is counted here and spooled below; only the sample is sent.
      if (this.sample === null || this.sample.take(record)) this.rows.push(record);
    }
    this.spool?.append(batch.map((r) => ({ record: r.record, gaps: r.contentGaps.view() })));
    for (const r of batch) r.contentGaps.release();
    if (this.rows.length >= SEND_AT_ROWS) this.flushRecords();
    loopBusy.settle(); // keeps this work out of the next wake's bound (loop-busy.ts)
  }

  // Record batches go to the outbox as they fill (it paces them: outbox.ts; it numbers them, so
  // `seq` is left 0 here).
  private flushRecords(): void {
    while (this.rows.length > 0) {
      const rows = this.rows.splice(0, BATCH_ROWS);
      this.send({ type: 'records', seq: 0, rows });
      loopBusy.settle(); // encoding a batch takes a while: keep it out of the next wake's bound
    }
  }

  private async finish(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.finishing.drain();
    this.recorder!.flushAll();
    await this.recorder!.drained();
    this.flushRecords();
    if (this.linkGone) {
      // Nobody can take the rest now: keep the spool for a restarted agent to hand over.
      await this.spool?.close(false);
      this.eventLoop.disable();
      this.stallLog.stop();
      await this.dispatcher.close();
      return;
    }
    // `final` follows every record batch (the outbox sends it after them); the spool stays until the
    // coordinator acknowledges it (the session deletes it then: a `final` lost with the link is
    // resent, never lost).
    await this.spool?.close(false);
    this.send({
      type: 'final',
      windows: this.recorder!.encodeRun(),
      health: this.health(),
      records: this.done,
      ...(this.terminated !== undefined && { terminated: this.terminated }),
      ...(this.sample && { tally: this.sample.tallies() }),
    });
    this.eventLoop.disable();
    this.stallLog.stop();
    await this.dispatcher.close();
  }

  private heartbeat(): void {
    this.send({
      type: 'heartbeat',
      in_flight: this.inFlight,
      sent: this.sent,
      done: this.done,
      errors: this.errors,
      health: this.health(),
      clock_correction_ns: Math.round(this.correctionNs()),
    });
  }

  private health(): AgentHealth {
    const [lagP99] = percentilesNs(this.lag, [0.99]);
    const cpu = process.cpuUsage(this.cpuStart);
    return {
      schedule_lag_p99_ms: this.lag.totalCount > 0 ? nsToMs(lagP99!) : null,
      schedule_lag_max_ms: this.lag.totalCount > 0 ? nsToMs(this.lag.maxValue) : null,
      event_loop_delay_p99_ms: lateness(this.eventLoop.percentile(99)),
      event_loop_delay_max_ms: lateness(this.eventLoop.max),
      cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
      // Four decimals: a share, and artifacts should not carry float noise.
      elu: this.eluStart ? Math.round(performance.eventLoopUtilization(this.eluStart).utilization * 1e4) / 1e4 : 0,
      stalls: this.stallLog.list(),
    };
  }

  // Periodic work settles the loop-busy bound after it runs (loop-busy.ts: no stamp should carry it).
  private every(ms: number, fn: () => void): void {
    this.timers.push(
      setInterval(() => {
        fn();
        loopBusy.settle();
      }, ms),
    );
  }

  private commonHeaders(target: Target): Record<string, string> {
    return { 'content-type': 'application/json', accept: 'text/event-stream', ...(target.headers ?? {}) };
  }

  // The key from target.api_key_env (undefined without one); a plan naming a variable that is unset here fails.
  private apiKey(target: Target): string | undefined {
    if (!target.api_key_env) return undefined;
    const key = process.env[target.api_key_env];
    if (!key)
      throw new LoadfleetError(
        ErrorCode.AGENT_FAILED,
        `the plan reads the API key from $${target.api_key_env}, which is not set on this agent`,
      );
    return key;
  }
}
