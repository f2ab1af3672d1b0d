// Every message a run takes from its agents (through their channels, which acknowledge,
// de-duplicate and move the phase first), handed to the collector and the run's bookkeeping.
import type { AgentMessage } from '../../shared/protocol.js';
import type { AgentChannel } from '../channel.js';
import type { RunState } from './context.js';
import { agentTerminated } from './losses.js';

/** One message of a running agent (or, on a lost channel, of its restarted process's upload). */
export function onAgentMessage(run: RunState, s: AgentChannel, m: AgentMessage): void {
  const c = run.collector!;
  s.lastHeardMs = Date.now();
  if (s.lost) {
    onUpload(run, s, m);
    return;
  }
  switch (m.type) {
    case 'records':
      c.records(s.index, m.rows);
      return;
    case 'interval':
      c.interval(s.index, m.second, m.classes);
      return;
    case 'started':
      s.firstSendErrorNs = m.first_send_error_ns;
      run.steering?.started(s, run.states);
      return;
    case 'heartbeat':
      s.health = m.health;
      if (m.clock_correction_ns !== undefined) s.clockCorrectionNs = m.clock_correction_ns;
      return;
    case 'final':
      c.final(s.index, m.windows, m.tally);
      s.health = m.health;
      c.agentGone(); // it sends no more intervals: seconds that waited for it close
      // An agent whose process was stopped mid-run (SIGTERM) handed over what it measured but
      // not its whole share: its data stays (its final is acknowledged, so its spool goes), and
      // it counts as lost against --max-agent-loss.
      if (m.terminated !== undefined) agentTerminated(run, s, `${m.terminated}; it handed over its ${m.records} requests`);
      run.wake();
      return;
    case 'failed':
      s.failure = `${m.code}: ${m.message}`;
      run.opts.log(`agent ${s.id} failed: ${s.failure}`);
      run.stopAll(`agent ${s.id} failed: ${m.message}`);
      return;
    default:
      return;
  }
}

// A restarted process hands over its spool on the lost agent's channel (fresh sequence space).
function onUpload(run: RunState, s: AgentChannel, m: AgentMessage): void {
  const c = run.collector!;
  if (m.type === 'records') {
    s.recoveredRecords += c.records(s.index, m.rows, true);
  } else if (m.type === 'final' && !s.spoolHandedOver) {
    s.spoolHandedOver = true;
    c.final(s.index, m.windows);
    run.opts.log(`agent ${s.id} handed over ${s.recoveredRecords} spooled requests`);
    run.runEvents.push(`agent ${s.id} handed over ${s.recoveredRecords} spooled requests after it was lost`);
  }
}
