// Hands a spool over to the coordinator: every spooled record (the coordinator drops any it
// already has), then the run histograms rebuilt from those records, as the agent would have sent
// them at the end. No load is sent. Both go through an outbox of their own (a restarted process
// has a sequence space of its own), which paces the batches; the upload is done only when `final`
// is acknowledged (the caller waits for that: hand-over.ts).
import type { AgentHealth } from '../shared/protocol.js';
import type { Outbox } from './outbox.js';
import { BATCH_ROWS } from './outbox.js';
import { Recorder } from './recorder.js';
import type { SpoolEntry, SpoolHeader } from './spool.js';

/** Puts `entries` and the rebuilt `final` in the outbox. */
export function uploadSpool(header: SpoolHeader, entries: readonly SpoolEntry[], outbox: Outbox): void {
  for (let i = 0; i < entries.length; i += BATCH_ROWS)
    outbox.send({ type: 'records', seq: 0, rows: entries.slice(i, i + BATCH_ROWS).map((e) => e.record) });
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
  outbox.send({ type: 'final', windows: recorder.encodeRun(), health, records: entries.length });
}
