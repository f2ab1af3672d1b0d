// Hands a spool over to the coordinator: every spooled record (the coordinator drops any it
// already has), then the run histograms rebuilt from those records, as the agent would have sent
// them at the end. No load is sent. Both go through an outbox of their own (a restarted process
// has a sequence space of its own), so the upload is done only when `final` is acknowledged.
import type { AgentHealth } from '../shared/protocol.js';
import type { Outbox } from './outbox.js';
import { Recorder } from './recorder.js';
import type { SpoolEntry, SpoolHeader } from './spool.js';

const BATCH_ROWS = 1000;
const ACK_WINDOW = 8;

/** Uploads `entries`; resolves once the coordinator acknowledged every batch and `final`. */
export async function uploadSpool(header: SpoolHeader, entries: readonly SpoolEntry[], outbox: Outbox): Promise<void> {
  for (let i = 0, seq = 0; i < entries.length; i += BATCH_ROWS, seq++) {
    const rseq = outbox.send({ type: 'records', seq, rows: entries.slice(i, i + BATCH_ROWS).map((e) => e.record) });
    // At most ACK_WINDOW batches unacknowledged: memory stays bounded on both sides.
    if (rseq > ACK_WINDOW) await outbox.acked(rseq - ACK_WINDOW);
  }
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
  const rseq = outbox.send({ type: 'final', windows: recorder.encodeRun(), health, records: entries.length });
  await outbox.acked(rseq);
}
