// Hands a spool over to the coordinator: every spooled record (the coordinator drops any it
// already has), then the run histograms rebuilt from those records, as the agent would have sent
// them at the end. No load is sent.
import type { AgentHealth, AgentMessage } from '../shared/protocol.js';
import { Recorder } from './recorder.js';
import type { SpoolEntry, SpoolHeader } from './spool.js';

const BATCH_ROWS = 1000;
const ACK_WINDOW = 8;

/** Uploads `entries`; resolves once the coordinator acknowledged every batch and got `final`. */
export async function uploadSpool(
  header: SpoolHeader,
  entries: readonly SpoolEntry[],
  send: (m: AgentMessage) => void,
  acks: { wait(): Promise<void> },
): Promise<void> {
  let inFlight = 0;
  for (let i = 0, seq = 0; i < entries.length; i += BATCH_ROWS, seq++) {
    while (inFlight >= ACK_WINDOW) {
      await acks.wait();
      inFlight--;
    }
    send({ type: 'records', seq, rows: entries.slice(i, i + BATCH_ROWS).map((e) => e.record) });
    inFlight++;
  }
  for (; inFlight > 0; inFlight--) await acks.wait();
  const recorder = new Recorder(
    header.windows,
    () => 0,
    () => {},
  );
  for (const e of entries) recorder.finished(e.record, e.gaps);
  const health: AgentHealth = {
    schedule_lag_p99_ms: null,
    schedule_lag_max_ms: null,
    event_loop_delay_p99_ms: 0,
    event_loop_delay_max_ms: 0,
    cpu_ms: 0,
  };
  send({ type: 'final', windows: recorder.encodeRun(), health, records: entries.length });
}
