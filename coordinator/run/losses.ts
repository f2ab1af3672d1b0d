// Loss accounting: an agent whose link is gone is held as reconnecting for its grace (its load
// goes on, its data waits on its side), then lost; a SIGTERMed agent handed over early. Each loss
// counts against --max-agent-loss (run-status.ts agentLoss): within it the run goes on without the
// agent, beyond it the run is stopped.
import type { AgentChannel } from '../channel.js';
import { agentLoss } from '../run-status.js';
import type { RunState } from './context.js';

/** The agent's link is gone (closed, or silent past the heartbeat timeout). */
export function linkDown(run: RunState, s: AgentChannel, why: string): void {
  if (s.done || s.reconnecting) return;
  if (run.opts.agentGraceMs <= 0) {
    agentLost(run, s, why);
    return;
  }
  s.step('link-down');
  s.outages.push({ from_s: run.elapsedS(), to_s: null, reason: why, resumed: false });
  s.conn.terminate();
  run.opts.log(`agent ${s.id}: link down (${why}); holding it as reconnecting for up to ${run.opts.agentGraceMs / 1000} s`);
}

/** The agent is gone for this run: its grace ran out, or its process restarted. */
export function agentLost(run: RunState, s: AgentChannel, why: string): void {
  if (s.done) return;
  s.step('lose');
  const outage = s.outages.at(-1);
  if (outage && outage.to_s === null) outage.to_s = run.elapsedS();
  run.journal?.event({ type: 'lost', agent: s.index, why, at_s: run.elapsedS() });
  s.conn.close('lost');
  countLoss(run, s, why);
}

/** A SIGTERMed agent's final is merged like any other; only its share is short. */
export function agentTerminated(run: RunState, s: AgentChannel, why: string): void {
  s.terminated = why;
  countLoss(run, s, why);
}

function countLoss(run: RunState, s: AgentChannel, why: string): void {
  const lost = run.states.filter((x) => x.lost || x.terminated !== null).length;
  run.opts.log(`agent ${s.id} was lost (${why})`);
  const loss = agentLoss(s.id, why, lost, run.lossBudget, run.opts.maxAgentLoss);
  if (loss.stop) {
    run.stopAll(loss.reason);
  } else {
    run.runEvents.push(loss.reason);
    run.collector?.agentGone();
    run.wake();
  }
}
