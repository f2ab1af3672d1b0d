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
import { ErrorCode, ExitCode, LoadfleetError } from '../shared/errors.js';
import { CLOSE_CODE } from '../shared/protocol.js';
import type { LocalAgent } from './local.js';
import { spawnLocalAgents } from './local.js';
import type { AgentConn } from './server.js';
import { AgentServer } from './server.js';

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
  log(line: string): void;
}

/** The run in progress, as far as the fleet needs it: it takes agents that come back to it. */
export interface RunHandle {
  /** An agent said hello with `resume_run_id`; returns true when it rejoined the run live. */
  resume(conn: AgentConn): boolean;
}

/** A set of agents that outlives any one run. */
export class Fleet {
  /** The coordinator's one clock: every run of the fleet shares its anchor with the agents. */
  readonly clock: Clock = anchoredClock();
  readonly fleetId = randomBytes(4).toString('hex');
  private readonly members = new Map<string, AgentConn>();
  private readonly waiters = new Set<() => void>();
  private local: LocalAgent[] = [];
  private run: RunHandle | null = null;
  private closing = false;
  private url = '';

  private constructor(
    readonly opts: FleetOptions,
    private readonly server: AgentServer,
  ) {
    server.onHello = (conn) => this.hello(conn);
  }

  /** Listens (and spawns the local agents); the agents join in the background. */
  static async open(opts: FleetOptions): Promise<Fleet> {
    const server = new AgentServer({
      host: opts.listenHost,
      port: opts.listenPort,
      token: opts.token,
      log: opts.log,
      ...(opts.tls ? { tls: opts.tls } : {}),
    });
    const fleet = new Fleet(opts, server);
    const port = await server.listen();
    const host = opts.listenHost.includes(':') ? `[${opts.listenHost}]` : opts.listenHost;
    fleet.url = `${opts.tls ? 'wss' : 'ws'}://${host}:${port}`;
    opts.log(`waiting for ${opts.agents} agent(s) at ${fleet.url}`);
    if (opts.spawnLocal) {
      // Local agents are this fleet's alone, so they spool under its id: the ids agent-1… repeat
      // in every fleet, and another fleet's spool must never look like theirs (an --agent-arg wins).
      fleet.local = spawnLocalAgents(
        opts.agents,
        fleet.url.replace('0.0.0.0', '127.0.0.1'),
        opts.token,
        [`--spool-dir=${fleet.spoolDir()}`, ...opts.agentArgs],
        opts.log,
      );
    }
    return fleet;
  }

  /** Where local agents spool. */
  spoolDir(): string {
    return join(tmpdir(), 'loadfleet-spool', `fleet-${this.fleetId}`);
  }

  /** Resolves once all N agents have joined; rejects (LF_JOIN_TIMEOUT) after --join-timeout-s. */
  async waitForAgents(): Promise<void> {
    const { agents, joinTimeoutMs } = this.opts;
    if (await this.waitUntil(() => this.members.size >= agents, joinTimeoutMs)) return;
    throw new LoadfleetError(
      ErrorCode.JOIN_TIMEOUT,
      `${this.members.size} of ${agents} agents joined within ${joinTimeoutMs / 1000} s; start agents with: agent --coordinator ${this.url} --token …`,
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
    if (this.members.size < n) {
      this.opts.log(`${this.members.size} of ${n} agents connected; waiting up to ${agentGraceMs / 1000} s for the others to rejoin`);
      await this.waitUntil(() => this.members.size >= n, agentGraceMs);
    }
    const missing = n - this.members.size;
    if (missing > maxAgentLoss) {
      throw new LoadfleetError(
        ErrorCode.FLEET_SHORT,
        `${missing} of ${n} agents are gone (connected: ${[...this.members.keys()].join(', ') || 'none'}); more than --max-agent-loss ${maxAgentLoss}`,
        { exitCode: ExitCode.ABORTED },
      );
    }
    if (missing > 0) this.opts.log(`running on ${this.members.size} of ${n} agents (within --max-agent-loss ${maxAgentLoss})`);
    const agents = [...this.members.values()];
    for (const [i, a] of agents.entries()) a.index = i;
    return { agents, lossBudget: maxAgentLoss - missing };
  }

  /** The run that takes agents coming back (null between runs). */
  setRun(run: RunHandle | null): void {
    this.run = run;
  }

  /** Releases every agent (they exit 0, or wait for the next coordinator with --stay) and closes. */
  async release(reason: string): Promise<void> {
    this.closing = true;
    const gone = [...this.members.values()].map((a) => new Promise<void>((r) => (a.closed ? r() : a.onClose(r))));
    for (const a of this.members.values()) a.send({ type: 'release', reason });
    await Promise.race([Promise.all(gone), new Promise((r) => setTimeout(r, 3000))]);
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
    const refusal = this.refusalOf(conn);
    if (refusal) {
      this.opts.log(`refused ${conn.hello.agent_id} from ${conn.remote}: ${refusal.reason}`);
      conn.close(refusal.reason, refusal.code);
    } else if (conn.hello.resume_run_id === undefined) {
      this.admit(conn, 'joined');
    } else if (this.run?.resume(conn)) {
      // (otherwise the run took its spool, or refused it and closed the link itself)
      this.admit(conn, 'rejoined its run');
    }
  }

  // Why an agent may not join now, or null.
  private refusalOf(conn: AgentConn): { reason: string; code: number } | null {
    const id = conn.hello.agent_id;
    if (this.closing) return { reason: 'the coordinator is finishing', code: CLOSE_CODE.FINISHING };
    if (conn.hello.resume_run_id !== undefined)
      return this.run ? null : { reason: `no run is in progress (run ${conn.hello.resume_run_id} is over)`, code: CLOSE_CODE.UNKNOWN_RUN };
    const current = this.members.get(id);
    if (current && !current.closed)
      return { reason: `${ErrorCode.DUPLICATE_AGENT}: agent id ${id} is already connected`, code: CLOSE_CODE.DUPLICATE };
    if (this.members.size >= this.opts.agents)
      return { reason: `the fleet already has its ${this.opts.agents} agents`, code: CLOSE_CODE.DUPLICATE };
    return null;
  }

  private admit(conn: AgentConn, what: string): void {
    const id = conn.hello.agent_id;
    this.members.set(id, conn);
    conn.onClose(() => {
      if (this.members.get(id) !== conn) return;
      this.members.delete(id);
      if (!this.closing && !this.run) this.opts.log(`agent ${id} left the fleet between runs`);
    });
    this.opts.log(`agent ${id} ${what} from ${conn.remote} (${this.members.size}/${this.opts.agents})`);
    for (const w of this.waiters) w();
  }

  // Resolves true once `ready()` holds, false after `timeoutMs`.
  private waitUntil(ready: () => boolean, timeoutMs: number): Promise<boolean> {
    if (ready()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = (): void => {
        if (!ready()) return;
        done(true);
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
