// The agent's side of the protocol. An agent belongs to a fleet, not to a run: it joins a
// coordinator and serves every run it is sent (welcome, clock probes, plan, arm, run, final) until
// the coordinator releases it. A link cut mid-run does not stop the load: the agent reconnects with
// backoff and resumes the same run, resending what was not acknowledged (outbox.ts), for as long as
// the coordinator holds it (its grace); only then does it stop and keep its spool. A run is handed
// over when the coordinator acknowledged its `final` (handOver); only then is the spool deleted.
// A link that dies between runs is reconnected too: the agent proves with the secret it was given
// at join that it is the same process, and takes its slot back.

import type { Clock } from '../shared/clock.js';
import { clockFromAnchor } from '../shared/clock.js';
import { ErrorCode, ExitCode, LoadfleetError } from '../shared/errors.js';
import type { AgentMessage, CoordinatorMessage } from '../shared/protocol.js';
import { CLOSE_CODE } from '../shared/protocol.js';
import { auditAck } from './ack-audit.js';
import type { CurrentRun } from './current-run.js';
import { newRun } from './current-run.js';
import { awaitFinalAck } from './hand-over.js';
import { offerSpool } from './leftover.js';
import type { Link } from './link.js';
import { connectLink } from './link.js';
import { Outbox } from './outbox.js';
import { outliveCoordinator } from './outlive.js';
import type { RunEvent } from './run-phase.js';
import { holdsLoad, runNext } from './run-phase.js';
import { createRunner } from './runner.js';
import type { SessionOptions } from './session-options.js';
import { EPOCH, helloOf, probeReply } from './session-options.js';
import { findSpools, keepSpools, removeSpools, setAside } from './spool.js';
import { trackRun } from './terminate.js';

export type { SessionOptions } from './session-options.js';

/** How long a cut-off agent keeps its load going when the coordinator did not say (protocol 1's silence limit). */
export const DEFAULT_GRACE_MS = 10_000;

const STAY_RETRY_MS = 1000;
/** How long a release waits for a hand-over in progress to delete its spool. */
const RELEASE_WAIT_MS = 2000;

/** Serves coordinators: one until it releases us, or with `stay` one after another until refused. */
export async function runAgent(opts: SessionOptions): Promise<number> {
  for (;;) {
    const code = await runSession(opts);
    // Ended without a coordinator to take its run: keep offering the spool for a stated time. (A
    // staying agent offers it to every coordinator that comes, first thing: runSession.)
    if (!opts.stay) {
      if (code === ExitCode.OK || code === ExitCode.INVALID_INPUT) return code;
      const kept = await outliveCoordinator(opts);
      // Handed over: the coordinator that took it may still have runs to send.
      return kept === 0 ? new Member(opts).serve() : code;
    }
    opts.log(`waiting for the next coordinator at ${opts.coordinatorUrl}`);
    await new Promise((r) => setTimeout(r, STAY_RETRY_MS));
  }
}

/** Serves one coordinator to its end; resolves with the process exit code. A leftover spool is uploaded first. */
export async function runSession(opts: SessionOptions): Promise<number> {
  const leftover = await findSpools(opts.spoolDir, opts.agentId);
  if (leftover.length > 0) {
    const code = await offerSpool(opts, leftover).catch((err: Error) => {
      if (err instanceof LoadfleetError && err.exitCode === ExitCode.INVALID_INPUT) throw err;
      opts.log(`could not hand over ${leftover.join(', ')}: ${err.message}`);
      // No coordinator reached: the spool stays as it is, to be offered again (outlive.ts).
      if (err instanceof LoadfleetError && err.code === ErrorCode.JOIN_TIMEOUT) return ExitCode.FAILURE;
      return CLOSE_CODE.UNKNOWN_RUN;
    });
    // The coordinator that took the spool still has runs to send: join it as a member again.
    if (code === 0) return new Member(opts).serve();
    if (code !== CLOSE_CODE.UNKNOWN_RUN) return code;
    for (const path of leftover) opts.log(`kept ${await setAside(path)} (its run is not in progress here)`);
    opts.log('joining as a new agent');
  }
  return new Member(opts).serve();
}

// One coordinator's member: every run it sends, until it releases us or goes away.
class Member {
  private link: Link | undefined;
  private readonly outbox = new Outbox();
  private clock: Clock;
  private run: CurrentRun | undefined;
  private lastHeardMs = Date.now();
  private reconnecting = false;
  /** Issued by the fleet at join: presented when we come back on a new link. */
  private secret: string | undefined;
  /** A hand-over's last step (deleting the spool) under way: a release waits for it. */
  private spoolRemoval: Promise<unknown> = Promise.resolve();
  /** Set once the coordinator released us: the link closing after that is the end, not a failure. */
  private released = false;
  /** The grace the coordinator last told us: how long it holds our slot. */
  private graceMs = DEFAULT_GRACE_MS;
  private settle: (code: number) => void = () => {};
  private readonly ended = new Promise<number>((r) => (this.settle = r));

  constructor(private readonly opts: SessionOptions) {
    this.clock = opts.clock;
  }

  async serve(): Promise<number> {
    try {
      this.link = await this.connect(this.opts.connectTimeoutMs);
      this.outbox.up(this.link);
      this.link.send(helloOf(this.opts));
      return await this.ended;
    } finally {
      await this.link?.close();
    }
  }

  private hello(extra: Partial<Extract<AgentMessage, { type: 'hello' }>> = {}): Extract<AgentMessage, { type: 'hello' }> {
    return { ...helloOf(this.opts), ...(this.secret === undefined ? {} : { secret: this.secret }), ...extra };
  }

  private connect(giveUpAfterMs: number): Promise<Link> {
    const link: Promise<Link> = connectLink({
      url: this.opts.coordinatorUrl,
      token: this.opts.token,
      giveUpAfterMs,
      ...(this.opts.ca ? { ca: this.opts.ca } : {}),
      onMessage: (m) => void link.then((l) => l === this.link && this.onMessage(m)),
      onClose: (code, reason) => void link.then((l) => l === this.link && this.onClose(code, reason)),
      log: this.opts.log,
    });
    return link;
  }

  private onMessage(m: CoordinatorMessage): void {
    this.lastHeardMs = Date.now();
    const { opts } = this;
    switch (m.type) {
      case 'joined':
        this.secret = m.secret;
        return;
      case 'welcome':
        this.welcome(m);
        return;
      case 'probe':
        // The run timeline's correction read with T2: the coordinator measures the slewed timeline
        // the records are stamped on, not only the raw clock it steers from.
        this.link?.send(probeReply(m, this.clock, () => this.run?.runner?.clockCorrectionNs()));
        return;
      case 'plan':
        this.plan(m);
        return;
      case 'arm':
        setTimeout(() => this.arm(m.start_local_ns), opts.armDelayMs);
        return;
      case 'ack':
        if (this.run) {
          auditAck(opts.agentId, this.run.runId, EPOCH, m.seq);
          const a = this.run.acks;
          a.heard++;
          if (m.seq <= a.mark) a.repeated++;
          a.mark = Math.max(a.mark, m.seq);
        }
        this.outbox.ack(m.seq);
        return;
      case 'resume': {
        if (m.acked !== undefined) auditAck(opts.agentId, m.run_id, EPOCH, m.acked);
        const { resent, queued } = this.outbox.up(this.link!, m.acked);
        this.reconnecting = false;
        opts.log(`resumed run ${m.run_id}: resent ${resent} unacknowledged messages and ${queued} held ones`);
        return;
      }
      case 'slew':
        this.run?.runner?.slew(m.rate_ppm);
        return;
      case 'stop':
        opts.log(`coordinator asked to stop: ${m.reason}`);
        if (this.run) this.step(this.run, 'stop');
        this.run?.runner?.stop(m.reason);
        return;
      case 'abort': {
        opts.log(`run aborted by the coordinator: ${m.reason}`);
        const runner = this.run?.runner;
        if (this.run) this.step(this.run, 'abort');
        this.run = undefined;
        runner?.stop(m.reason);
        void runner?.discardSpool();
        return;
      }
      case 'release':
        this.released = true;
        opts.log(`released by the coordinator: ${m.reason}`);
        // A hand-over whose ack came just before (even in the same TCP read) finishes first.
        void Promise.race([this.run?.handOver ?? Promise.resolve(), new Promise((r) => setTimeout(r, RELEASE_WAIT_MS))])
          .then(() => this.spoolRemoval)
          .then(() => this.settle(ExitCode.OK));
        return;
    }
  }

  /**
   * Moves the run's phase (run-phase.ts). A move the table does not have is a coordinator breaking
   * the protocol (or a late message): said, and the phase left as it is.
   */
  private step(run: CurrentRun, event: RunEvent): void {
    const to = runNext(run.phase, event);
    if (to === null) this.opts.log(`error ${ErrorCode.PHASE_MOVE}: run ${run.runId}: no move for ${event} in phase ${run.phase}`);
    else run.phase = to;
  }

  private welcome(m: Extract<CoordinatorMessage, { type: 'welcome' }>): void {
    const { opts } = this;
    opts.log(`run ${m.run_id}: agent ${m.agent_index + 1} of ${m.agent_count}`);
    // A waiter on the last run's acks (its hand-over) hears that they will not come: its spool is kept.
    this.outbox.reset(`run ${m.run_id} began before the coordinator acknowledged them`);
    this.graceMs = m.grace_ms ?? DEFAULT_GRACE_MS;
    this.run = newRun(m.run_id, this.graceMs);
    // Same machine, same boot: the monotonic clock is the coordinator's, so its anchor is ours too.
    if (opts.shareHostAnchor && !opts.clockDomainDeclared && m.anchor && m.host_domain === opts.clockDomainId) {
      this.clock = clockFromAnchor({ wallNs: m.anchor.wall_ns, hr: m.anchor.hr, uncertaintyNs: m.anchor.uncertainty_ns });
      opts.log("on the coordinator's host: using its clock anchor");
    }
  }

  private plan(m: Extract<CoordinatorMessage, { type: 'plan' }>): void {
    const { opts } = this;
    opts.onPlan?.();
    // A plan without a welcome first (no coordinator sends one) still gets a run to belong to.
    if (this.run?.runId !== m.run_id) this.run = newRun(m.run_id, this.graceMs);
    const run = this.run;
    this.step(run, 'plan');
    run.keepRecords = typeof m.plan.records === 'object';
    const t0 = performance.now();
    const send = (msg: AgentMessage): void => {
      this.outbox.send(msg);
      if (msg.type !== 'final') return;
      // Ended early (a stop signal, a spool that cannot be written): said here, and in `final` to the coordinator.
      if (msg.terminated !== undefined) opts.log(`run ${m.run_id}: the load stopped early: ${msg.terminated}`);
      // `final` is the run's last message that must arrive: once everything is acknowledged, it is.
      run.finalAcked = this.outbox.allAcked();
      run.finalAcked.catch(() => {}); // a reset before handOver awaits it is heard there
      this.step(run, 'final');
    };
    try {
      run.runner = createRunner(m.run_id, m.plan, m.share, this.clock, send, opts.workers);
    } catch (err) {
      const e = err instanceof LoadfleetError ? err : new LoadfleetError(ErrorCode.AGENT_FAILED, (err as Error).message);
      this.outbox.send({ type: 'failed', code: e.code, message: e.message });
      this.step(run, 'fail');
      this.run = undefined;
      return;
    }
    const runner = run.runner;
    const spool = { dir: opts.spoolDir, header: { run_id: m.run_id, agent_id: opts.agentId, windows: m.plan.windows ?? [] } };
    runner.prepare(spool).then(
      (note) => {
        opts.log(note);
        const warmUp = runner.warmUp();
        this.outbox.send({
          type: 'prepared',
          prep_ms: performance.now() - t0,
          planned_requests: runner.plannedRequests(),
          ...(warmUp && { warm_up: warmUp }),
        });
        this.step(run, 'prepared');
      },
      (err: Error) => {
        this.outbox.send({ type: 'failed', code: ErrorCode.AGENT_FAILED, message: err.message });
        this.step(run, 'fail');
        if (this.run === run) this.run = undefined;
      },
    );
  }

  private arm(startLocalNs: bigint): void {
    const run = this.run;
    const runner = run?.runner;
    if (!run || !runner || run.phase !== 'prepared') return; // aborted, dropped or failed meanwhile
    this.outbox.send({ type: 'armed', start_local_ns: startLocalNs });
    this.step(run, 'arm');
    let handedOver: (ok: boolean) => void = () => {};
    // SIGTERM (agent/terminate.ts) ends this runner early and waits for this same hand-over.
    trackRun(runner, new Promise<boolean>((r) => (handedOver = r)));
    run.handOver = runner.start(startLocalNs).then(
      async () => void handedOver(await this.handOver(run)),
      (err: Error) => {
        handedOver(false);
        this.outbox.send({ type: 'failed', code: ErrorCode.AGENT_FAILED, message: err.message });
        this.step(run, 'fail');
      },
    );
  }

  /**
   * The hand-over, from the moment the runner put `final` in the outbox: done when the coordinator
   * acknowledged it (across any reconnects), and only then is the spool deleted. A runner that
   * ended without `final` (its coordinator stayed away) or a run given up keeps its spool.
   * (A shutdown that hands over early — SIGTERM — ends its runner and awaits this same function.)
   */
  async handOver(run: CurrentRun): Promise<boolean> {
    if (run.finalAcked !== undefined) {
      const acked = await awaitFinalAck(run.finalAcked, run.gaveUp, (err) =>
        this.opts.log(`run ${run.runId}: its final was not handed over (${err.message}); the spool stays in ${this.opts.spoolDir}`),
      );
      if (acked && run.phase === 'handing-over') {
        this.step(run, 'acked');
        this.spoolRemoval = (run.keepRecords ? keepSpools : removeSpools)(this.opts.spoolDir, this.opts.agentId, run.runId).catch(() => 0);
        if (run.keepRecords)
          this.opts.log(`run ${run.runId}: every record kept in ${this.opts.spoolDir} (${this.opts.agentId}.${run.runId}*.records.ndjson)`);
        await this.spoolRemoval;
      }
    }
    if (this.run === run) this.run = undefined;
    if (run.phase === 'handed-over') {
      this.opts.log(`run ${run.runId} handed over (${run.acks.heard} acks, ${run.acks.repeated} repeated); waiting for the next run`);
      return true;
    }
    // A later run already under way (the outbox was reset for it) goes on; the session ends only
    // when no coordinator took the run.
    if (this.run !== undefined) return false;
    this.opts.log(`run ${run.runId} ended without a coordinator to take it; its spool is kept for the next one`);
    this.settle(ExitCode.FAILURE);
    return false;
  }

  // The coordinator no longer holds the run for us, or cannot be reached within its grace.
  private giveUp(run: CurrentRun, why: string): void {
    this.reconnecting = false;
    this.step(run, 'give-up');
    run.runner?.linkLost(why);
    run.giveUp();
  }

  private onClose(code: number, reason = ''): void {
    const { opts } = this;
    this.outbox.down();
    if (this.released) return;
    if (code === CLOSE_CODE.DUPLICATE) {
      opts.log(
        `error ${ErrorCode.DUPLICATE_AGENT}: the coordinator refused us: agent id ${opts.agentId} is already connected (or the fleet is full); give each agent its own --id`,
      );
      this.settle(ExitCode.INVALID_INPUT);
      return;
    }
    const run = this.run;
    // Given up: the spool is kept and the hand-over ends the session (handOver).
    if (run?.phase === 'given-up') return;
    if (run && holdsLoad(run.phase)) {
      if (code === CLOSE_CODE.UNKNOWN_RUN) {
        // The coordinator no longer holds this run for us (grace over, or a new coordinator).
        opts.log(`the coordinator refused run ${run.runId}${reason ? ` (${reason})` : ''}: stopping the load, keeping the spool`);
        this.giveUp(run, 'the coordinator refused the resume');
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
    if (run) this.step(run, 'link-closed');
    this.run = undefined;
    if (code === CLOSE_CODE.FINISHING) {
      opts.log('the coordinator is finishing');
      this.settle(ExitCode.FAILURE);
      return;
    }
    // A link that died (1006: no closing handshake, e.g. dropped by the heartbeat) may have taken a
    // `release` with it: come back and ask, with our secret, for as long as the fleet holds our slot.
    if (code === 1006 && this.secret !== undefined && !this.reconnecting) {
      void this.rejoinFleet();
      return;
    }
    opts.log(`the coordinator closed the link (code ${code}) without releasing us`);
    this.settle(ExitCode.FAILURE);
  }

  // Between runs: reconnect and take our slot back (or hear the release we missed).
  private async rejoinFleet(): Promise<void> {
    const { opts } = this;
    this.reconnecting = true;
    opts.log(`link to the coordinator lost between runs; reconnecting for up to ${(this.graceMs / 1000).toFixed(1)} s`);
    try {
      const link = await this.connect(this.graceMs);
      this.link = link;
      this.reconnecting = false;
      this.outbox.up(link);
      link.send(this.hello());
      opts.log('reconnected to the fleet');
    } catch (err) {
      this.reconnecting = false;
      opts.log(`could not reach the coordinator again: ${(err as Error).message}`);
      this.settle(ExitCode.FAILURE);
    }
  }

  // Mid-run (or with `final` not yet acknowledged): keep the load going and reconnect until the
  // coordinator's grace (counted, as it counts it, from when we last heard it) runs out; then stop
  // and keep the spool.
  private async reconnect(run: CurrentRun): Promise<void> {
    const { opts } = this;
    this.reconnecting = true;
    const deadline = this.lastHeardMs + run.graceMs;
    opts.log(`link to the coordinator lost mid-run; load goes on, reconnecting for up to ${((deadline - Date.now()) / 1000).toFixed(1)} s`);
    try {
      if (deadline <= Date.now()) throw new Error('grace already over');
      const link = await this.connect(deadline - Date.now());
      // The new link is ours whatever happened meanwhile: a link left unassigned would leave the
      // agent holding messages for a socket that is gone.
      this.link = link;
      link.send(this.hello({ resume_run_id: run.runId, resume_live: true }));
      opts.log(`reconnected; asking to resume run ${run.runId}`);
    } catch (err) {
      if (err instanceof LoadfleetError && err.exitCode === ExitCode.INVALID_INPUT) opts.log(`error ${err.code}: ${err.message}`);
      opts.log(`could not reconnect within the grace: stopping the load (${(err as Error).message})`);
      this.giveUp(run, 'coordinator unreachable for longer than its grace');
    }
  }
}
