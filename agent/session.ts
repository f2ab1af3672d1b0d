// The agent's side of the protocol. An agent belongs to a fleet, not to a run: it joins a
// coordinator and serves every run it is sent (welcome, clock probes, plan, arm, run, final) until
// the coordinator releases it. A link cut mid-run does not stop the load: the agent reconnects with
// backoff and resumes the same run, resending what was not acknowledged (outbox.ts), for as long as
// the coordinator holds it (its grace); only then does it stop and keep its spool.

import { rename } from 'node:fs/promises';
import type { Clock } from '../shared/clock.js';
import { clockFromAnchor } from '../shared/clock.js';
import { ErrorCode, ExitCode, LoadfleetError } from '../shared/errors.js';
import type { AgentMessage, CoordinatorMessage } from '../shared/protocol.js';
import { CLOSE_CODE, PROTOCOL_VERSION } from '../shared/protocol.js';
import type { SelfTestFigures } from '../shared/self-test.js';
import type { Link } from './link.js';
import { connectLink } from './link.js';
import { Outbox } from './outbox.js';
import { createRunner } from './runner.js';
import type { ShareRunner } from './share-runner.js';
import { findSpools, readSpool, setAside } from './spool.js';
import { uploadSpool } from './upload.js';

/** A link the coordinator has been silent on this long during a run is treated as cut. */
export const COORDINATOR_SILENCE_MS = 5000;
/** How long a cut-off agent keeps its load going when the coordinator did not say (protocol 1's silence limit). */
export const DEFAULT_GRACE_MS = 10_000;

/** How an agent identifies itself and reaches the coordinator. */
export interface SessionOptions {
  coordinatorUrl: string;
  token: string;
  agentId: string;
  host: string;
  clockDomainId: string;
  clockDomainDeclared: boolean;
  clock: Clock;
  connectTimeoutMs: number;
  ca?: Buffer;
  /** Where finished requests are spooled, and where a restarted agent looks for a spool to upload. */
  spoolDir: string;
  /** Adopt the coordinator's clock anchor when it runs on this machine (off when a test shifts our clock). */
  shareHostAnchor: boolean;
  /** Worker threads that stripe this agent's share (1: the main thread runs it). */
  workers: number;
  /** What the agent measured of itself before joining (null: skipped or failed); sent in every hello. */
  selfTest?: SelfTestFigures | null;
  /** Test hook: wait this long before answering `arm` (proves the arm deadline). */
  armDelayMs: number;
  /** After a release (or a coordinator that went away), wait for the next coordinator instead of exiting. */
  stay: boolean;
  log(line: string): void;
}

const STAY_RETRY_MS = 1000;

/** Serves coordinators: one until it releases us, or with `stay` one after another until refused. */
export async function runAgent(opts: SessionOptions): Promise<number> {
  for (;;) {
    const code = await runSession(opts);
    if (!opts.stay) return code;
    opts.log(`waiting for the next coordinator at ${opts.coordinatorUrl}`);
    await new Promise((r) => setTimeout(r, STAY_RETRY_MS));
  }
}

/** Serves one coordinator to its end; resolves with the process exit code. A leftover spool is uploaded first. */
export async function runSession(opts: SessionOptions): Promise<number> {
  const leftover = await findSpools(opts.spoolDir, opts.agentId);
  if (leftover.length > 0) {
    const code = await resumeSession(opts, leftover).catch((err: Error) => {
      if (err instanceof LoadfleetError && err.exitCode === ExitCode.INVALID_INPUT) throw err;
      opts.log(`could not hand over ${leftover.join(', ')}: ${err.message}`);
      return CLOSE_CODE.UNKNOWN_RUN;
    });
    if (code !== CLOSE_CODE.UNKNOWN_RUN) return code;
    for (const path of leftover) opts.log(`kept ${await setAside(path)} (its run is not in progress here)`);
    opts.log('joining as a new agent');
  }
  return new Member(opts).serve();
}

// Reconnects with `resume_run_id` and uploads the spool; resolves with an exit code, or with
// CLOSE_CODE.UNKNOWN_RUN when the coordinator refused the resume.
async function resumeSession(opts: SessionOptions, paths: readonly string[]): Promise<number> {
  const spools = await Promise.all(paths.map(readSpool));
  const header = spools[0]!.header;
  const entries = spools.flatMap((s) => s.entries);
  opts.log(`found the spool of run ${header.run_id} (${entries.length} requests); offering it to the coordinator`);
  let settle: (code: number) => void = () => {};
  const ended = new Promise<number>((r) => (settle = r));
  const ackWaiters: (() => void)[] = [];
  const acks = { wait: () => new Promise<void>((r) => ackWaiters.push(r)) };
  // Once `final` is out, the coordinator closing the link is the hand-over completing, not a failure
  // (it may close before the spool files are renamed here).
  let handedOver = false;
  const link = await connectLink({
    url: opts.coordinatorUrl,
    token: opts.token,
    giveUpAfterMs: opts.connectTimeoutMs,
    ...(opts.ca ? { ca: opts.ca } : {}),
    log: opts.log,
    onClose: (code) => {
      if (!handedOver) settle(code === CLOSE_CODE.UNKNOWN_RUN ? CLOSE_CODE.UNKNOWN_RUN : 1);
    },
    onMessage: (m) => {
      if (m.type === 'ack') ackWaiters.shift()?.();
      if (m.type === 'probe')
        link.send({ type: 'probe_reply', seq: m.seq, t1_ns: m.t1_ns, t2_ns: opts.clock.nowNs(), t3_ns: opts.clock.nowNs() });
      if (m.type !== 'resume') return;
      void uploadSpool(header, entries, (msg) => link.send(msg), acks).then(async () => {
        handedOver = true;
        for (const path of paths) await rename(path, `${path}.done`);
        opts.log(`uploaded ${entries.length} spooled requests of run ${header.run_id}`);
        settle(0);
      });
    },
  });
  link.send({ ...helloOf(opts), resume_run_id: header.run_id });
  const code = await ended;
  link.close();
  // The coordinator that took the spool still has runs to send: join it as a member again.
  return code === 0 ? new Member(opts).serve() : code;
}

function helloOf(opts: SessionOptions): Extract<AgentMessage, { type: 'hello' }> {
  return {
    type: 'hello',
    protocol: PROTOCOL_VERSION,
    agent_id: opts.agentId,
    host: opts.host,
    pid: process.pid,
    clock_domain_id: opts.clockDomainId,
    clock_domain_declared: opts.clockDomainDeclared,
    clock_anchor_uncertainty_ns: opts.clock.anchorUncertaintyNs,
    workers: opts.workers,
    ...(opts.selfTest ? { self_test: opts.selfTest } : {}),
  };
}

/** The run this agent is in, from `welcome` until it handed over (or gave up). */
interface CurrentRun {
  runId: string;
  graceMs: number;
  runner?: ShareRunner;
  /** Set once armed: the load (and the hand-over) is under way. */
  running?: Promise<void>;
}

// One coordinator's member: every run it sends, until it releases us or goes away.
class Member {
  private link: Link | undefined;
  private readonly outbox = new Outbox();
  private clock: Clock;
  private run: CurrentRun | undefined;
  private lastHeardMs = Date.now();
  private reconnecting = false;
  private settle: (code: number) => void = () => {};
  private readonly ended = new Promise<number>((r) => (this.settle = r));

  constructor(private readonly opts: SessionOptions) {
    this.clock = opts.clock;
  }

  async serve(): Promise<number> {
    // During a run the coordinator probes every second: silence means the link is dead even if the
    // socket does not know it yet, so drop it and reconnect.
    const watchdog = setInterval(() => {
      if (this.run?.running && !this.reconnecting && Date.now() - this.lastHeardMs > COORDINATOR_SILENCE_MS) {
        this.opts.log(`coordinator silent for ${COORDINATOR_SILENCE_MS / 1000} s: dropping the link`);
        this.link?.terminate();
      }
    }, 1000);
    try {
      this.link = await this.connect(this.opts.connectTimeoutMs);
      this.outbox.up(this.link);
      this.link.send(helloOf(this.opts));
      return await this.ended;
    } finally {
      clearInterval(watchdog);
      this.link?.close();
    }
  }

  private connect(giveUpAfterMs: number): Promise<Link> {
    const link: Promise<Link> = connectLink({
      url: this.opts.coordinatorUrl,
      token: this.opts.token,
      giveUpAfterMs,
      ...(this.opts.ca ? { ca: this.opts.ca } : {}),
      onMessage: (m) => this.onMessage(m),
      onClose: (code) => void link.then((l) => l === this.link && this.onClose(code)),
      log: this.opts.log,
    });
    return link;
  }

  private onMessage(m: CoordinatorMessage): void {
    this.lastHeardMs = Date.now();
    const { opts } = this;
    switch (m.type) {
      case 'welcome':
        this.welcome(m);
        return;
      case 'probe': {
        const t2 = this.clock.nowNs();
        this.link?.send({ type: 'probe_reply', seq: m.seq, t1_ns: m.t1_ns, t2_ns: t2, t3_ns: this.clock.nowNs() });
        return;
      }
      case 'plan':
        this.plan(m);
        return;
      case 'arm':
        setTimeout(() => this.arm(m.start_local_ns), opts.armDelayMs);
        return;
      case 'ack':
        this.outbox.ack(m.seq);
        this.run?.runner?.acked(m.seq);
        return;
      case 'resume': {
        const { resent, queued } = this.outbox.up(this.link!);
        this.reconnecting = false;
        opts.log(`resumed run ${m.run_id}: resent ${resent} unacknowledged record batches and ${queued} held messages`);
        return;
      }
      case 'stop':
        opts.log(`coordinator asked to stop: ${m.reason}`);
        this.run?.runner?.stop(m.reason);
        return;
      case 'abort': {
        opts.log(`run aborted by the coordinator: ${m.reason}`);
        const runner = this.run?.runner;
        this.run = undefined;
        runner?.stop(m.reason);
        void runner?.discardSpool();
        return;
      }
      case 'release':
        opts.log(`released by the coordinator: ${m.reason}`);
        this.settle(ExitCode.OK);
        return;
    }
  }

  private welcome(m: Extract<CoordinatorMessage, { type: 'welcome' }>): void {
    const { opts } = this;
    opts.log(`run ${m.run_id}: agent ${m.agent_index + 1} of ${m.agent_count}`);
    this.outbox.reset();
    this.run = { runId: m.run_id, graceMs: m.grace_ms ?? DEFAULT_GRACE_MS };
    // Same machine, same boot: the monotonic clock is the coordinator's, so its anchor is ours too.
    if (opts.shareHostAnchor && !opts.clockDomainDeclared && m.anchor && m.host_domain === opts.clockDomainId) {
      this.clock = clockFromAnchor({ wallNs: m.anchor.wall_ns, hr: m.anchor.hr, uncertaintyNs: m.anchor.uncertainty_ns });
      opts.log("on the coordinator's host: using its clock anchor");
    }
  }

  private plan(m: Extract<CoordinatorMessage, { type: 'plan' }>): void {
    const { opts } = this;
    // A plan without a welcome first (no coordinator sends one) still gets a run to belong to.
    if (this.run?.runId !== m.run_id) this.run = { runId: m.run_id, graceMs: DEFAULT_GRACE_MS };
    const run = this.run;
    const t0 = performance.now();
    try {
      run.runner = createRunner(m.run_id, m.plan, m.share, this.clock, (msg) => this.outbox.send(msg), opts.workers);
    } catch (err) {
      const e = err instanceof LoadfleetError ? err : new LoadfleetError(ErrorCode.AGENT_FAILED, (err as Error).message);
      this.outbox.send({ type: 'failed', code: e.code, message: e.message });
      this.run = undefined;
      return;
    }
    const runner = run.runner;
    const spool = { dir: opts.spoolDir, header: { run_id: m.run_id, agent_id: opts.agentId, windows: m.plan.windows ?? [] } };
    runner.prepare(spool).then(
      (note) => {
        opts.log(note);
        this.outbox.send({ type: 'prepared', prep_ms: performance.now() - t0, planned_requests: runner.plannedRequests() });
      },
      (err: Error) => {
        this.outbox.send({ type: 'failed', code: ErrorCode.AGENT_FAILED, message: err.message });
        this.run = undefined;
      },
    );
  }

  private arm(startLocalNs: bigint): void {
    const run = this.run;
    const runner = run?.runner;
    if (!run || !runner) return; // aborted meanwhile
    this.outbox.send({ type: 'armed', start_local_ns: startLocalNs });
    run.running = runner.start(startLocalNs).then(
      () => this.runEnded(run),
      (err: Error) => this.outbox.send({ type: 'failed', code: ErrorCode.AGENT_FAILED, message: err.message }),
    );
  }

  // The run is over on our side: handed over (wait for the next one), or given up on (spool kept).
  private runEnded(run: CurrentRun): void {
    if (this.run === run) this.run = undefined;
    if (run.runner?.handedOver) {
      this.opts.log(`run ${run.runId} handed over; waiting for the next run`);
      return;
    }
    this.opts.log(`run ${run.runId} ended without a coordinator to take it; its spool is kept for the next one`);
    this.settle(ExitCode.FAILURE);
  }

  private onClose(code: number): void {
    const { opts } = this;
    this.outbox.down();
    if (code === CLOSE_CODE.DUPLICATE) {
      opts.log(
        `error ${ErrorCode.DUPLICATE_AGENT}: the coordinator refused us: agent id ${opts.agentId} is already connected (or the fleet is full); give each agent its own --id`,
      );
      this.settle(ExitCode.INVALID_INPUT);
      return;
    }
    const run = this.run;
    if (run?.running && !run.runner?.handedOver) {
      if (code === CLOSE_CODE.UNKNOWN_RUN) {
        // The coordinator no longer holds this run for us (grace over, or a new coordinator).
        opts.log(`the coordinator refused to resume run ${run.runId}: stopping the load, keeping the spool`);
        this.reconnecting = false;
        run.runner?.linkLost('the coordinator refused the resume');
        return;
      }
      void this.reconnect(run);
      return;
    }
    // Between runs (or before the load began) nothing is lost with the link: the coordinator
    // aborts a run an agent left before the start, and its spool is empty.
    if (run?.runner) {
      run.runner.stop('coordinator connection closed');
      void run.runner.discardSpool();
    }
    this.run = undefined;
    opts.log(
      code === CLOSE_CODE.FINISHING
        ? 'the coordinator is finishing'
        : `the coordinator closed the link (code ${code}) without releasing us`,
    );
    this.settle(ExitCode.FAILURE);
  }

  // Mid-run: keep the load going and reconnect until the coordinator's grace (counted, as it
  // counts it, from when we last heard it) runs out; then stop and keep the spool.
  private async reconnect(run: CurrentRun): Promise<void> {
    const { opts } = this;
    this.reconnecting = true;
    const deadline = this.lastHeardMs + run.graceMs;
    opts.log(`link to the coordinator lost mid-run; load goes on, reconnecting for up to ${((deadline - Date.now()) / 1000).toFixed(1)} s`);
    try {
      if (deadline <= Date.now()) throw new Error('grace already over');
      const link = await this.connect(deadline - Date.now());
      if (this.run !== run) {
        link.close();
        return;
      }
      this.link = link;
      link.send({ ...helloOf(opts), resume_run_id: run.runId, resume_live: true });
      opts.log(`reconnected; asking to resume run ${run.runId}`);
    } catch (err) {
      if (err instanceof LoadfleetError && err.exitCode === ExitCode.INVALID_INPUT) opts.log(`error ${err.code}: ${err.message}`);
      opts.log(`could not reconnect within the grace: stopping the load (${(err as Error).message})`);
      this.reconnecting = false;
      run.runner?.linkLost('coordinator unreachable for longer than its grace');
    }
  }
}
