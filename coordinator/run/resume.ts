// An agent coming back to a run on a new link. The same process (its epoch) after a cut link
// rejoins live: it goes on with its load and resends everything past the channel's mark, which it
// is told. One whose `final` is already merged is told the mark again (its ack was lost with the
// link), also while the run is closing and once it is closed, until the fleet's next run. A restarted process of a lost agent hands over its spool
// in a sequence space of its own (its records and rebuilt run histograms; it sends no load); one
// that claims the id of an agent whose link is alive is refused.
import { ErrorCode } from '../../shared/errors.js';
import { failpoint } from '../../shared/failpoints.js';
import { CLOSE_CODE } from '../../shared/protocol.js';
import type { AgentChannel } from '../channel.js';
import type { AgentConn } from '../server.js';
import type { RunState } from './context.js';
import { agentLost, linkDown } from './losses.js';

/** Returns true when the link joins the fleet (a live rejoin, or a hand-over being confirmed). */
export function resume(run: RunState, conn: AgentConn): boolean {
  const s = run.states.find((x) => x.id === conn.hello.agent_id);
  const refuse = (why: string, code: number = CLOSE_CODE.UNKNOWN_RUN): false => {
    conn.close(why, code);
    return false;
  };
  if (conn.hello.resume_run_id !== run.runId || !s || !run.collector)
    return refuse(`run ${conn.hello.resume_run_id} is not in progress here`);
  const sameProcess = conn.hello.resume_live === true && conn.hello.epoch === s.epoch;
  if (s.final && sameProcess && run.phase === 'closed') {
    // Between this run's end and the next: its `final` is merged (and written), so the agent is
    // told the mark and completes its hand-over, as the fleet does for runs already over.
    conn.send({ type: 'resume', run_id: run.runId, acked: s.hwm });
    run.opts.log(`agent ${conn.hello.agent_id} came back for the acknowledgement of its final: already merged`);
    return true;
  }
  if (run.phase === 'closed') return refuse(`run ${conn.hello.resume_run_id} is not in progress here`);
  // The run can still be recovered from its journal once the fault is dealt with: a spool offered
  // now is to be offered again (4503, "finishing"), not set aside as a run nobody holds.
  if (run.fault) return refuse(run.refusal()!, CLOSE_CODE.FINISHING);
  if (s.final) {
    if (!sameProcess) return refuse(`${conn.hello.agent_id} has nothing left to give run ${run.runId}`);
    conn.index = s.index;
    s.attach(conn);
    conn.send({ type: 'resume', run_id: run.runId, acked: s.hwm });
    run.opts.log(`agent ${conn.hello.agent_id} came back for the acknowledgement of its final`);
    return true;
  }
  if (run.phase === 'closing') return refuse(`run ${run.runId} is closing`);
  if (sameProcess && !s.lost) return rejoin(run, s, conn);
  if (conn.hello.resume_live) {
    if (!s.lost)
      return refuse(
        `${ErrorCode.DUPLICATE_AGENT}: agent id ${conn.hello.agent_id} is in run ${run.runId} as another process`,
        CLOSE_CODE.DUPLICATE,
      );
    // The same process, back after its grace ran out: it was lost; a restart hands its spool over.
    return refuse(`${conn.hello.agent_id} was lost from run ${run.runId} (its grace ran out)`);
  }
  if (!s.lost && !s.reconnecting && !s.conn.closed)
    return refuse(
      `${ErrorCode.DUPLICATE_AGENT}: agent id ${conn.hello.agent_id} is connected and running; a restarted process may hand over its spool only once that link is gone`,
      CLOSE_CODE.DUPLICATE,
    );
  // A restarted process: whatever ran before it is gone, so the agent is lost (it cannot send
  // load again); what it finished is in the spool it offers.
  if (!s.lost) agentLost(run, s, 'its process restarted');
  s.attach(conn, true);
  s.uploadConn = conn;
  conn.send({ type: 'resume', run_id: run.runId, acked: 0 });
  return false;
}

// The same agent process is back on a new link: carry on where it was.
function rejoin(run: RunState, s: AgentChannel, conn: AgentConn): boolean {
  if (!s.reconnecting) linkDown(run, s, 'it reconnected before its old link was seen to fail');
  // Without a grace the old link's end was the agent's loss: a restart may hand its spool over.
  if (s.lost) {
    conn.close(`${conn.hello.agent_id} was lost from run ${run.runId} (no grace)`, CLOSE_CODE.UNKNOWN_RUN);
    return false;
  }
  const outage = s.outages.at(-1)!;
  outage.to_s = run.elapsedS();
  outage.resumed = true;
  const downS = outage.to_s - outage.from_s;
  s.step('rejoin');
  s.lastHeardMs = Date.now();
  if (run.recovery) failpoint('recover.rejoin');
  conn.index = s.index;
  s.attach(conn);
  conn.send({ type: 'resume', run_id: run.runId, acked: s.hwm });
  if (run.abortReason !== null) s.stop(run.abortReason);
  run.opts.log(`agent ${conn.hello.agent_id} reconnected after ${downS.toFixed(1)} s and resumed the run`);
  run.runEvents.push(
    `agent ${conn.hello.agent_id} was cut off for ${downS.toFixed(1)} s from t=${outage.from_s.toFixed(1)} s (${outage.reason}); it reconnected and resumed`,
  );
  return true;
}
