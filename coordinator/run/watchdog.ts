// The run's once-a-second work: the plan's abort rules, the silence watchdog, the end of the grace
// for agents that are reconnecting, and an in-run clock probe to each live agent (clock/steering.ts:
// the drift fit and the steering, or a held-out residual).
import { StallClock } from '../../shared/late-tick.js';
import type { RunState } from './context.js';
import { agentLost, linkDown } from './losses.js';

/** The period of the in-run watchdog. */
export const EVERY_SECOND_MS = 1000;
/** An agent silent this long during a run is lost (heartbeats come every second). */
const AGENT_SILENCE_MS = 5000;
/**
 * In-run clock probes a second at most: agents beyond this many are probed in turns (10,000 agents:
 * each every 10 s), so a large fleet's probes cost the coordinator no more than 1,000 agents' do;
 * the drift fit and the steering of each agent get fewer points (run.json agents[].run_probes).
 */
const IN_RUN_PROBES_PER_S = 1000;

/** Ticks once a second while the load runs. */
export class Watchdog {
  private probeSeq = 0;
  /** Seconds ticked, for the probe turns of a large fleet. */
  private ticks = 0;
  /** The watchdog's time base, which does not count this process's own stalls as an agent's silence. */
  private readonly stallClock = new StallClock(EVERY_SECOND_MS);

  constructor(private readonly run: RunState) {}

  tick(): void {
    const { run } = this;
    const now = this.stallClock.tick();
    // An abort rule that fired stops the run like any other stop: aborted, every artifact written.
    if (run.abortWatch && run.abortReason === null && run.clock.nowNs() > run.startNs) {
      const why = run.abortWatch.check(Number(run.clock.nowNs() - run.startNs));
      if (why !== null) {
        run.opts.log(why);
        run.stopAll(why);
      }
    }
    // This process's own stalls are no agent's silence (its frames are read after the timers), nor
    // part of a reconnecting agent's grace (its hello may wait unread): late-tick.ts.
    // A large fleet is probed in turns (IN_RUN_PROBES_PER_S a second): each probe is two frames, a
    // timer and a handler on the link, for every agent every second otherwise.
    const turns = Math.max(1, Math.ceil(run.states.length / IN_RUN_PROBES_PER_S));
    const turn = this.ticks++ % turns;
    for (const s of run.states) {
      if (s.final || s.lost) continue;
      if (s.reconnecting) {
        if (this.stallClock.silenceMs(s.lastHeardMs, now) > run.opts.agentGraceMs)
          agentLost(run, s, `cut off for ${((now - s.lastHeardMs) / 1000).toFixed(1)} s, longer than --agent-grace-s`);
        continue;
      }
      if (this.stallClock.silenceMs(s.lastHeardMs, now) > AGENT_SILENCE_MS) {
        linkDown(run, s, `silent for ${((now - s.lastHeardMs) / 1000).toFixed(1)} s`);
        continue;
      }
      if (s.index % turns !== turn) continue;
      // Each probe its own number: a late reply must not complete a later probe.
      run.steering!.probe(s, () => 1_000_000 + this.probeSeq++, run.states).catch(() => void run.probeFailures++);
    }
  }
}
