// An audit of the acknowledgements this agent heard, for crash tests: with LOADFLEET_ACK_AUDIT_DIR
// set, every ack and every resume mark is appended to DIR/<agent id>.acks as `run epoch seq`, before
// the outbox acts on it. A test that kills the coordinator compares the marks heard with what its
// journal holds: every sequence number acknowledged must be on the coordinator's disk. Unset, nothing.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.LOADFLEET_ACK_AUDIT_DIR;

/** Records that the coordinator acknowledged `seq` of this process (`epoch`) in `runId`. */
export function auditAck(agentId: string, runId: string, epoch: string, seq: number): void {
  if (!dir) return;
  appendFileSync(join(dir, `${agentId}.acks`), `${runId} ${epoch} ${seq}\n`);
}
