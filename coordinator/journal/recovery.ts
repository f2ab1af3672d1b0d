// What run.json says of a run recovered from its journal by a restarted coordinator (`recovered`),
// with a definition for each field.

/** How a run was recovered after its coordinator stopped. */
export interface Recovery {
  down_from_s: number;
  restarted_at_s: number;
  replayed_messages: number;
  torn_tail_bytes: number;
  zero_tail_bytes: number;
  during_load: boolean;
}

/** run.json's definitions of `recovered`. */
export const RECOVERY_DEFINITIONS: Record<string, string> = {
  recovered:
    "present only when the run's coordinator stopped (killed, crashed) and a restarted one completed the run from its journal: every acknowledged message was on disk, the agents resent the rest, and each record counts once",
  'recovered.down_from_s':
    "seconds after the start of the journal's last write: the latest moment the stopped coordinator is known to have been running (the outage began at or after it)",
  'recovered.restarted_at_s':
    'seconds after the start at which the restarted coordinator had read the journal and listened for the agents again',
  'recovered.replayed_messages': 'agent messages read back from the journal and taken again, in the order they first arrived',
  'recovered.torn_tail_bytes':
    "bytes past the journal's last valid frame (a frame cut short by the stop, or zeros), dropped as its end: never acknowledged, so its agent still held it and sent it again",
  'recovered.zero_tail_bytes':
    "of torn_tail_bytes, the zeros the journal ended in (the file had grown before its data reached the disk, or was preallocated): read as the log's end, as PostgreSQL and SQLite read a WAL's",
  'recovered.during_load':
    'true when the outage began inside the load window (0 to duration_s): the agents kept their load going and resent what was not durable, but the server was not scraped and no agent clock was steered during the outage',
};
