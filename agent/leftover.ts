// A process that finds a spool of an earlier run (its predecessor was killed, or lost its
// coordinator) offers it first: it reconnects with `resume_run_id` and hands the spool over on a
// sequence space of its own, as an upload (run-phase.ts: uploading → handed-over | given-up).
import { rename } from 'node:fs/promises';
import { CLOSE_CODE } from '../shared/protocol.js';
import { auditAck } from './ack-audit.js';
import { awaitFinalAck } from './hand-over.js';
import { connectLink } from './link.js';
import { Outbox } from './outbox.js';
import type { RunPhase } from './run-phase.js';
import { runStep } from './run-phase.js';
import type { SessionOptions } from './session-options.js';
import { EPOCH, helloOf, probeReply } from './session-options.js';
import { readSpool, spoolDamage } from './spool.js';
import { uploadSpool } from './upload.js';

/**
 * Reconnects with `resume_run_id` and uploads the spool; resolves with 0 once it is handed over,
 * with CLOSE_CODE.UNKNOWN_RUN when the coordinator refused the resume, else with 1.
 */
export async function offerSpool(opts: SessionOptions, paths: readonly string[]): Promise<number> {
  const spools = await Promise.all(paths.map(readSpool));
  const header = spools[0]!.header;
  const entries = spools.flatMap((s) => s.entries);
  const damage = spoolDamage(spools);
  opts.log(
    `found the spool of run ${header.run_id} (${entries.length} requests${damage ? `; ${damage}` : ''}); offering it to the coordinator`,
  );
  let settle: (code: number) => void = () => {};
  const ended = new Promise<number>((r) => (settle = r));
  let linkClosed: () => void = () => {};
  const closed = new Promise<void>((r) => (linkClosed = r));
  const outbox = new Outbox();
  let phase: RunPhase = 'uploading';
  const link = await connectLink({
    url: opts.coordinatorUrl,
    token: opts.token,
    giveUpAfterMs: opts.connectTimeoutMs,
    ...(opts.ca ? { ca: opts.ca } : {}),
    log: opts.log,
    // Handed over once `final` is acknowledged; the link closing after that is no failure.
    onClose: (code, reason) => {
      linkClosed();
      if (phase === 'handed-over') return;
      if (reason) opts.log(`the coordinator closed the upload of run ${header.run_id}: ${reason}`);
      phase = runStep(phase, 'give-up', header.run_id);
      settle(code === CLOSE_CODE.UNKNOWN_RUN ? CLOSE_CODE.UNKNOWN_RUN : 1);
    },
    onMessage: (m) => {
      if (m.type === 'ack') {
        auditAck(opts.agentId, header.run_id, EPOCH, m.seq);
        outbox.ack(m.seq);
      }
      if (m.type === 'probe') link.send(probeReply(m, opts.clock));
      if (m.type !== 'resume') return;
      if (m.acked !== undefined) auditAck(opts.agentId, header.run_id, EPOCH, m.acked);
      outbox.up(link, m.acked);
      uploadSpool(header, entries, outbox);
      void awaitFinalAck(outbox.allAcked(), closed).then(async (acked) => {
        if (!acked || phase !== 'uploading') return;
        phase = runStep(phase, 'acked', header.run_id);
        for (const path of paths) await rename(path, `${path}.done`);
        opts.log(`uploaded ${entries.length} spooled requests of run ${header.run_id}`);
        settle(0);
      });
    },
  });
  link.send({ ...helloOf(opts), resume_run_id: header.run_id });
  const code = await ended;
  await link.close();
  return code;
}
