// The coordinator's fleet: the agents that serve every run of one `start`, `sweep` or
// `experiment`. It owns the listening server (and the local agent processes in local mode),
// decides who may join (one link per agent id, at most N), hands each run the agents that are
// there, routes an agent that comes back mid-run to that run, and releases everyone at the end.
// Agents lost between runs are tolerated up to --max-agent-loss; an agent that restarts under its
// id joins again and is used again.
import { randomBytes } from 'node:crypto';
import { rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../shared/clock.js';
import { anchoredClock } from '../shared/clock.js';
import { SILENCE_DETECTION_BOUND_MS } from '../shared/delivery.js';
import { ErrorCode, ExitCode, LoadfleetError } from '../shared/errors.js';
import { CLOSE_CODE } from '../shared/protocol.js';
import { freeCoresNow } from './headroom/index.js';
import type { LocalAgent } from './local.js';
import { spawnLocalAgents } from './local.js';
import type { LocalLayout, LocalLayoutMode } from './local-layout.js';
import { chooseLocalLayout, workersOfAgentArgs } from './local-layout.js';
import type { AgentConn } from './server.js';
import { AgentServer } from './server.js';
import type { StopSignal } from './stop-signals.js';
import { stopReason } from './stop-signals.js';

/** What a fleet needs: where to listen, whom to expect, and how patient to be. */
export interface FleetOptions {
  agents: number;
  listenHost: string;
  listenPort: number;
  token: string;
  spawnLocal: boolean;
  joinTimeoutMs: number;
  agentArgs: readonly string[];
  maxAgentLoss: number;
  /** How long an agent cut off mid-run (or gone between runs) is waited for before it counts as lost. */
  agentGraceMs: number;
  tls?: { cert: Buffer; key: Buffer };
  /** Local agents: one process each, or several per process (--local-layout; default auto). */
  localLayout?: LocalLayoutMode;
  /** The free cores local agents share (--free-cores); measured when the fleet is spawned when absent. */
  freeCores?: number;
  log(line: string): void;
  /** A line printed even with --quiet: a local agent process that exited abnormally, with its last lines. */
  notice?(line: string): void;
}

/** An agent whose `final` a run merged, and the mark that acknowledges it. */
export interface HandedOver {
  agentId: string;
  epoch: string | undefined;
  hwm: number;
}

/** The run in progress, as far as the fleet needs it: it takes agents that come back to it. */
export interface RunHandle {
  readonly runId: string;
  /** An agent said hello with `resume_run_id`; returns true when the link joins the fleet (a live rejoin). */
  resume(conn: AgentConn): boolean;
  /** Agents whose `final` the run merged (read when the run is over). */
  handedOver(): HandedOver[];
}

/** One agent id's place in the fleet: its link, the secret it was given at join, and since when it is gone. */
interface Slot {
  conn: AgentConn;
  secret: string;
  /** Date.now() when its link closed; the slot is held for it for --agent-grace-s. */
  goneAtMs: number | null;
}

/** How long, past the heartbeat bound, a releasing fleet waits for an agent whose link went silent to come back. */
const RELEASE_REJOIN_MS = 3000;

/** Finished runs whose hand-overs are still acknowledged to an agent that asks again (its ack was lost). */
const REMEMBERED_RUNS = 8;

/** A set of agents that outlives any one run. */
export class Fleet {
  /** The coordinator's one clock: every run of the fleet shares its anchor with the agents. */
  readonly clock: Clock;
  readonly fleetId = randomBytes(4).toString('hex');
  private readonly slots = new Map<string, Slot>();
  /** run id → agent id → its hand-over, for the last few runs. */
  private readonly finished = new Map<string, Map<string, HandedOver>>();
  /** Agents that came back while the fleet was releasing, released on their new link (and gone). */
  private readonly released = new Set<string>();
  private readonly waiters = new Set<() => void>();
  private local: LocalAgent[] = [];
  /** How the local agents were laid out in processes (null: none spawned here). */
  localLayout: LocalLayout | null = null;
  private run: RunHandle | null = null;
  private closing = false;
  /** The stop signal heard, if one came. */
  private stoppedBy: StopSignal | null = null;
  private url = '';

  private constructor(
    readonly opts: FleetOptions,
    private readonly server: AgentServer,
    clock: Clock | undefined,
  ) {
    this.clock = clock ?? anchoredClock();
    server.onHello = (conn) => this.hello(conn);
  }

  /**
   * Listens (and spawns the local agents); the agents join in the background. `recovered`: a run
   * taken up from its journal, in place before the first agent can say hello (and its clock).
   */
  static async open(opts: FleetOptions, recovered?: { clock: Clock; run: RunHandle }): Promise<Fleet> {
    const server = new AgentServer({
      host: opts.listenHost,
      port: opts.listenPort,
      token: opts.token,
      log: opts.log,
      ...(opts.tls ? { tls: opts.tls } : {}),
    });
    const fleet = new Fleet(opts, server, recovered?.clock);
    if (recovered) fleet.setRun(recovered.run);
    const port = await server.listen();
    const host = opts.listenHost.includes(':') ? `[${opts.listenHost}]` : opts.listenHost;
    fleet.url = `${opts.tls ? 'wss' : 'ws'}://${host}:${port}`;
    opts.log(`waiting for ${opts.agents} agent(s) at ${fleet.url}`);
    if (opts.spawnLocal) {
      // Local agents are this fleet's alone, so they spool under its id: the ids agent-1… repeat
      // in every fleet, and another fleet's spool must never look like theirs (an --agent-arg wins).
      const layout = chooseLocalLayout(
        opts.agents,
        opts.freeCores ?? freeCoresNow(),
        workersOfAgentArgs(opts.agentArgs),
        opts.localLayout ?? 'auto',
      );
      fleet.localLayout = layout;
      opts.log(
        layout.chosen === 'packed'
          ? `local layout: packed, ${layout.agents} agents in ${layout.processes} process(es) (${layout.why}; --local-layout process-per-agent gives each its own)`
          : `local layout: one process per agent (${layout.why})`,
      );
      fleet.local = spawnLocalAgents(
        layout.groups,
        fleet.url.replace('0.0.0.0', '127.0.0.1'),
        opts.token,
        [`--spool-dir=${fleet.spoolDir()}`, ...opts.agentArgs],
        opts.notice ?? opts.log,
      );
    }
    return fleet;
  }

  /** Where the agents connect (ws:// or wss://, host and port). */
  get listenUrl(): string {
    return this.url;
  }

  /** Agents connected now, by id. */
  private get members(): Map<string, AgentConn> {
    const live = new Map<string, AgentConn>();
    for (const [id, slot] of this.slots) if (!slot.conn.closed) live.set(id, slot.conn);
    return live;
  }

  /**
   * Agents whose link is open, counted without building the members map: it is asked at every
   * join (its log line and the waiters), and a map of every member per join made joining 10,000
   * agents quadratic in allocations.
   */
  private connectedCount(): number {
    let n = 0;
    for (const slot of this.slots.values()) if (!slot.conn.closed) n++;
    return n;
  }

  /** Slots taken: connected agents and, for their grace, agents whose link closed. */
  private heldSlots(except: string): number {
    const now = Date.now();
    let n = 0;
    for (const [id, slot] of this.slots) {
      if (id === except) continue;
      if (slot.goneAtMs !== null && now - slot.goneAtMs > this.opts.agentGraceMs) this.slots.delete(id);
      else n++;
    }
    return n;
  }

  /** Where local agents spool. */
  spoolDir(): string {
    return join(tmpdir(), 'loadfleet-spool', `fleet-${this.fleetId}`);
  }

  /** Resolves once all N agents have joined; rejects (LF_JOIN_TIMEOUT) after --join-timeout-s. */
  /**
   * A stop signal (coordinator/stop-signals.ts): no wait for agents goes on, and no run starts on
   * this fleet (the one under way stops on its own); the fleet is then released as usual.
   */
  stop(signal: StopSignal): void {
    this.stoppedBy ??= signal;
    for (const w of this.waiters) w();
  }

  /** Throws LF_ABORTED (exit 130) once a stop signal came: called before waiting or starting a run. */
  throwIfStopped(what: string): void {
    if (this.stoppedBy === null) return;
    throw new LoadfleetError(ErrorCode.ABORTED, `${stopReason(this.stoppedBy)} ${what}`, { exitCode: ExitCode.INTERRUPTED });
  }

  async waitForAgents(): Promise<void> {
    const { agents, joinTimeoutMs } = this.opts;
    const joined = await this.waitUntil(() => this.connectedCount() >= agents, joinTimeoutMs);
    this.throwIfStopped(`while waiting for agents (${this.connectedCount()} of ${agents} joined)`);
    if (joined) return;
    throw new LoadfleetError(
      ErrorCode.JOIN_TIMEOUT,
      `${this.connectedCount()} of ${agents} agents joined within ${joinTimeoutMs / 1000} s; start agents with: agent --coordinator ${this.url} --token …`,
      { exitCode: ExitCode.ABORTED },
    );
  }

  /**
   * The agents for the next run, in join order. Missing ones (gone since the last run) are waited
   * for for one grace period; if more than --max-agent-loss are still missing it throws
   * LF_FLEET_SHORT. Returns the agents and how many more the run itself may lose.
   */
  async agentsForRun(): Promise<{ agents: AgentConn[]; lossBudget: number }> {
    const { agents: n, agentGraceMs, maxAgentLoss } = this.opts;
    if (this.connectedCount() < n) {
      this.opts.log(`${this.connectedCount()} of ${n} agents connected; waiting up to ${agentGraceMs / 1000} s for the others to rejoin`);
      await this.waitUntil(() => this.connectedCount() >= n, agentGraceMs);
    }
    this.throwIfStopped('before the next run');
    const missing = n - this.connectedCount();
    if (missing > maxAgentLoss) {
      throw new LoadfleetError(
        ErrorCode.FLEET_SHORT,
        `${missing} of ${n} agents are gone (connected: ${[...this.members.keys()].join(', ') || 'none'}); more than --max-agent-loss ${maxAgentLoss}`,
        { exitCode: ExitCode.ABORTED },
      );
    }
    if (missing > 0) this.opts.log(`running on ${this.connectedCount()} of ${n} agents (within --max-agent-loss ${maxAgentLoss})`);
    const agents = [...this.members.values()];
    for (const [i, a] of agents.entries()) a.index = i;
    return { agents, lossBudget: maxAgentLoss - missing };
  }

  /** The run that takes agents coming back (null between runs). */
  setRun(run: RunHandle | null): void {
    // A finished run's hand-overs stay acknowledgeable: an agent whose ack of `final` died with its
    // link comes back for it after the run is over.
    if (this.run && run === null) {
      this.finished.set(this.run.runId, new Map(this.run.handedOver().map((h) => [h.agentId, h])));
      if (this.finished.size > REMEMBERED_RUNS) this.finished.delete(this.finished.keys().next().value!);
    }
    this.run = run;
  }

  /** Releases every agent (they exit 0, or wait for the next coordinator with --stay) and closes. */
  async release(reason: string): Promise<void> {
    this.closing = true;
    // Released means the agent closed its link cleanly after `release` (a closing handshake), or
    // came back on a new link and was released there. A link that died instead may have taken the
    // release with it: its agent notices within the heartbeat bound and comes back; it is waited
    // for that long, no longer.
    const ids = [...this.members.keys()];
    for (const a of this.members.values()) a.send({ type: 'release', reason });
    const done = (id: string): boolean => {
      const conn = this.slots.get(id)?.conn;
      return this.released.has(id) || conn === undefined || (conn.closed && conn.closeCode === 1000);
    };
    const deadline = Date.now() + SILENCE_DETECTION_BOUND_MS + RELEASE_REJOIN_MS;
    while (Date.now() < deadline && !ids.every(done)) await new Promise((r) => setTimeout(r, 50));
    await this.server.close();
    if (this.local.length > 0) {
      await Promise.race([Promise.all(this.local.map((a) => a.exited)), new Promise((r) => setTimeout(r, 5000))]);
      await Promise.all(this.local.map((a) => a.stop()));
      // Only an empty directory goes: a spool left by an agent that died mid-run is kept.
      await rmdir(this.spoolDir()).catch(() => {});
    }
  }

  // Every agent that said hello comes through here.
  private hello(conn: AgentConn): void {
    const { agent_id: id, resume_run_id: runId } = conn.hello;
    const refusal = this.refusalOf(conn);
    if (refusal) {
      this.opts.log(`refused ${id} from ${conn.remote}: ${refusal.reason}`);
      conn.close(refusal.reason, refusal.code);
    } else if (this.closing) {
      // The same process, back after its link went silent during the release: released now (and,
      // if the ack of its last `final` was lost too, told the mark first).
      const handed = this.handedOverBefore(conn);
      if (handed) conn.send({ type: 'resume', run_id: runId ?? '', acked: handed.hwm });
      conn.send({ type: 'release', reason: 'the coordinator is finishing' });
      conn.onClose(() => this.released.add(conn.hello.agent_id));
    } else if (runId === undefined) {
      this.admit(conn, 'joined');
    } else if (this.handedOverBefore(conn)) {
      // Its `final` was merged, and the ack was lost with its link: tell it the mark again.
      conn.send({ type: 'resume', run_id: runId, acked: this.handedOverBefore(conn)!.hwm });
      this.admit(conn, `came back for the acknowledgement of its final in run ${runId}`);
    } else if (this.run?.resume(conn)) {
      // (otherwise the run took its spool, or refused it and closed the link itself)
      this.admit(conn, 'rejoined its run');
    }
  }

  // Why an agent may not join now, or null. A process proves it is the one that joined by the
  // secret it was given then: with it, it takes its slot back (its old link, if the coordinator
  // still holds it, is dropped); without it, the id of a connected agent is refused.
  private refusalOf(conn: AgentConn): { reason: string; code: number } | null {
    const { agent_id: id, resume_run_id: runId, secret } = conn.hello;
    const slot = this.slots.get(id);
    const proven = slot !== undefined && secret !== undefined && secret === slot.secret;
    if (this.closing) return proven ? null : { reason: 'the coordinator is finishing', code: CLOSE_CODE.FINISHING };
    if (slot && !slot.conn.closed && !proven) {
      return {
        reason:
          secret === undefined
            ? `${ErrorCode.DUPLICATE_AGENT}: agent id ${id} is already connected`
            : `${ErrorCode.DUPLICATE_AGENT}: agent id ${id} is already connected, and this process is not the one that joined (wrong secret)`,
        code: CLOSE_CODE.DUPLICATE,
      };
    }
    if (runId !== undefined) {
      if (this.handedOverBefore(conn) && (proven || !slot)) return null;
      return this.run ? null : { reason: `no run is in progress (run ${runId} is over)`, code: CLOSE_CODE.UNKNOWN_RUN };
    }
    if (!slot && this.heldSlots(id) >= this.opts.agents)
      return {
        reason: `the fleet already has its ${this.opts.agents} agents (or holds their slots while they reconnect)`,
        code: CLOSE_CODE.DUPLICATE,
      };
    return null;
  }

  // The hand-over of a finished run this very process (same epoch, resuming live) comes back for.
  private handedOverBefore(conn: AgentConn): HandedOver | undefined {
    const { agent_id: id, resume_run_id: runId, resume_live: live, epoch } = conn.hello;
    if (runId === undefined || !live || (this.run !== null && this.run.runId === runId)) return undefined;
    const handed = this.finished.get(runId)?.get(id);
    return handed && handed.epoch === epoch ? handed : undefined;
  }

  private admit(conn: AgentConn, what: string): void {
    const id = conn.hello.agent_id;
    const old = this.slots.get(id);
    const slot: Slot = { conn, secret: randomBytes(16).toString('hex'), goneAtMs: null };
    this.slots.set(id, slot);
    if (old && old.conn !== conn && !old.conn.closed) old.conn.terminate();
    conn.send({ type: 'joined', secret: slot.secret });
    conn.onClose(() => {
      if (this.slots.get(id) !== slot) return;
      slot.goneAtMs = Date.now();
      if (!this.closing && !this.run) this.opts.log(`agent ${id} left the fleet between runs`);
    });
    this.opts.log(`agent ${id} ${what} from ${conn.remote} (${this.connectedCount()}/${this.opts.agents})`);
    for (const w of this.waiters) w();
  }

  // Resolves true once `ready()` holds, false after `timeoutMs`.
  private waitUntil(ready: () => boolean, timeoutMs: number): Promise<boolean> {
    if (ready()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = (): void => {
        if (this.stoppedBy !== null) done(ready());
        else if (ready()) done(true);
      };
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(ok);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.waiters.add(check);
    });
  }
}
