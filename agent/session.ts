// The agent's side of the protocol: a small state machine from hello to final. It answers clock
// probes, prepares its share when the plan arrives, arms for the start instant and runs.

import { rename } from 'node:fs/promises';
import type { Clock } from '../shared/clock.js';
import { clockFromAnchor } from '../shared/clock.js';
import { ErrorCode, LoadfleetError } from '../shared/errors.js';
import type { AgentMessage, CoordinatorMessage } from '../shared/protocol.js';
import { PROTOCOL_VERSION } from '../shared/protocol.js';
import type { Link } from './link.js';
import { connectLink } from './link.js';
import type { ShareRunner } from './runner.js';
import { createRunner } from './runner.js';
import { findSpools, readSpool, setAside } from './spool.js';
import { uploadSpool } from './upload.js';

/** An agent stops its load when the coordinator has been silent this long during a run. */
export const COORDINATOR_SILENCE_MS = 10_000;

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
  /** Test hook: wait this long before answering `arm` (proves the arm deadline). */
  armDelayMs: number;
  log(line: string): void;
}

/** The close code a coordinator uses for a resume of a run it does not know (any more). */
export const UNKNOWN_RUN_CLOSE = 4404;

/** Runs one session to its end; resolves with the process exit code. A leftover spool is uploaded first. */
export async function runSession(opts: SessionOptions): Promise<number> {
  const leftover = await findSpools(opts.spoolDir, opts.agentId);
  if (leftover.length > 0) {
    const code = await resumeSession(opts, leftover).catch((err: Error) => {
      opts.log(`could not hand over ${leftover.join(', ')}: ${err.message}`);
      return UNKNOWN_RUN_CLOSE;
    });
    if (code !== UNKNOWN_RUN_CLOSE) return code;
    for (const path of leftover) opts.log(`kept ${await setAside(path)} (its run is not in progress here)`);
    opts.log('joining as a new agent');
  }
  return freshSession(opts);
}

// Reconnects with `resume_run_id` and uploads the spool; resolves with an exit code, or with
// UNKNOWN_RUN_CLOSE when the coordinator refused the resume.
async function resumeSession(opts: SessionOptions, paths: readonly string[]): Promise<number> {
  const spools = await Promise.all(paths.map(readSpool));
  const header = spools[0]!.header;
  const entries = spools.flatMap((s) => s.entries);
  opts.log(`found the spool of run ${header.run_id} (${entries.length} requests); offering it to the coordinator`);
  let settle: (code: number) => void = () => {};
  const ended = new Promise<number>((r) => (settle = r));
  const ackWaiters: (() => void)[] = [];
  const acks = { wait: () => new Promise<void>((r) => ackWaiters.push(r)) };
  const link = await connectLink({
    url: opts.coordinatorUrl,
    token: opts.token,
    giveUpAfterMs: opts.connectTimeoutMs,
    ...(opts.ca ? { ca: opts.ca } : {}),
    log: opts.log,
    onClose: (code) => settle(code === UNKNOWN_RUN_CLOSE ? UNKNOWN_RUN_CLOSE : 1),
    onMessage: (m) => {
      if (m.type === 'ack') ackWaiters.shift()?.();
      if (m.type === 'probe')
        link.send({ type: 'probe_reply', seq: m.seq, t1_ns: m.t1_ns, t2_ns: opts.clock.nowNs(), t3_ns: opts.clock.nowNs() });
      if (m.type !== 'resume') return;
      void uploadSpool(header, entries, (msg) => link.send(msg), acks).then(async () => {
        for (const path of paths) await rename(path, `${path}.done`);
        opts.log(`uploaded ${entries.length} spooled requests of run ${header.run_id}`);
        settle(0);
      });
    },
  });
  link.send({ ...helloOf(opts), resume_run_id: header.run_id });
  const code = await ended;
  link.close();
  return code;
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
  };
}

async function freshSession(opts: SessionOptions): Promise<number> {
  let run: ShareRunner | undefined;
  let clock = opts.clock;
  let running: Promise<void> | undefined;
  let link: Link | undefined;
  let settle: (code: number) => void = () => {};
  const ended = new Promise<number>((r) => (settle = r));

  // During a run the coordinator probes every second; silence means it is gone or cut off, and
  // nobody would take the results, so the load stops (GPU endpoints are expensive).
  let lastHeardMs = Date.now();
  const watchdog = setInterval(() => {
    if (running && Date.now() - lastHeardMs > COORDINATOR_SILENCE_MS) {
      opts.log(`coordinator silent for ${COORDINATOR_SILENCE_MS / 1000} s: stopping load`);
      run?.linkLost('coordinator silent');
      void running.then(() => settle(1));
    }
  }, 1000);

  const onMessage = (m: CoordinatorMessage): void => {
    lastHeardMs = Date.now();
    switch (m.type) {
      case 'welcome':
        opts.log(`joined run ${m.run_id} as agent ${m.agent_index + 1} of ${m.agent_count}`);
        // Same machine, same boot: the monotonic clock is the coordinator's, so its anchor is ours too.
        if (opts.shareHostAnchor && !opts.clockDomainDeclared && m.anchor && m.host_domain === opts.clockDomainId) {
          clock = clockFromAnchor({ wallNs: m.anchor.wall_ns, hr: m.anchor.hr, uncertaintyNs: m.anchor.uncertainty_ns });
          opts.log("on the coordinator's host: using its clock anchor");
        }
        return;
      case 'probe': {
        const t2 = clock.nowNs();
        link!.send({ type: 'probe_reply', seq: m.seq, t1_ns: m.t1_ns, t2_ns: t2, t3_ns: clock.nowNs() });
        return;
      }
      case 'plan': {
        const t0 = performance.now();
        try {
          run = createRunner(m.run_id, m.plan, m.share, clock, (msg) => link!.send(msg), opts.workers);
        } catch (err) {
          const e = err instanceof LoadfleetError ? err : new LoadfleetError(ErrorCode.AGENT_FAILED, (err as Error).message);
          link!.send({ type: 'failed', code: e.code, message: e.message });
          settle(1);
          return;
        }
        const prepared = run;
        const spool = { dir: opts.spoolDir, header: { run_id: m.run_id, agent_id: opts.agentId, windows: m.plan.windows ?? [] } };
        prepared.prepare(spool).then(
          (note) => {
            opts.log(note);
            link!.send({ type: 'prepared', prep_ms: performance.now() - t0, planned_requests: prepared.plannedRequests() });
          },
          (err: Error) => {
            link!.send({ type: 'failed', code: ErrorCode.AGENT_FAILED, message: err.message });
            settle(1);
          },
        );
        return;
      }
      case 'arm':
        setTimeout(() => {
          link!.send({ type: 'armed', start_local_ns: m.start_local_ns });
          running = run!.start(m.start_local_ns).catch((err: Error) => {
            link!.send({ type: 'failed', code: ErrorCode.AGENT_FAILED, message: err.message });
          });
        }, opts.armDelayMs);
        return;
      case 'ack':
        run?.acked(m.seq);
        return;
      case 'stop':
        opts.log(`coordinator asked to stop: ${m.reason}`);
        run?.stop(m.reason);
        return;
      case 'abort':
        opts.log(`run aborted by the coordinator: ${m.reason}`);
        run?.stop(m.reason);
        void (run?.discardSpool() ?? Promise.resolve()).then(() => settle(0));
        return;
    }
  };

  const onClose = (): void => {
    // Without a coordinator nobody takes the results: stop sending load at once (endpoints are expensive).
    // After `final` the coordinator closing the link is the normal end.
    if (run?.handedOver) {
      settle(0);
      return;
    }
    run?.linkLost('coordinator connection closed');
    void (running ?? Promise.resolve()).then(() => settle(1));
  };

  link = await connectLink({
    url: opts.coordinatorUrl,
    token: opts.token,
    giveUpAfterMs: opts.connectTimeoutMs,
    ...(opts.ca ? { ca: opts.ca } : {}),
    onMessage,
    onClose,
    log: opts.log,
  });
  link.send(helloOf(opts));

  const code = await ended;
  clearInterval(watchdog);
  link.close();
  return code;
}
