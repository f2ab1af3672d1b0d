// Preloaded into a coordinator under test (NODE_OPTIONS=--import …/crash-at-final.js): the process
// SIGKILLs itself at a moment named by the agents' `final` messages as they reach its journal, so
// a test can stop it there deterministically instead of sleeping and hoping:
//   LOADFLEET_TEST_CRASH_AT_FINAL=N — as the journal is about to write the Nth `final` (N=1: the
//     agents have sent their last records and the first final is not yet durable, so none is
//     acknowledged: the drain, before every final is in);
//   LOADFLEET_TEST_CRASH_AFTER_FINAL=N — just after the flush that made the Nth `final` durable
//     (its acknowledgement goes out in that same turn of the event loop, so the agent has it).
// A message is journaled as the coordinator's msgpack bytes with their keys (no records), so a
// final's frame holds the bytes of `type: 'final'`.
import fs from 'node:fs';

const at = Number(process.env.LOADFLEET_TEST_CRASH_AT_FINAL ?? 0);
const after = Number(process.env.LOADFLEET_TEST_CRASH_AFTER_FINAL ?? 0);
const FINAL = Buffer.from([0xa4, ...Buffer.from('type'), 0xa5, ...Buffer.from('final')]);

if (at > 0 || after > 0) {
  const probe = await fs.promises.open(process.execPath, 'r');
  const proto = Object.getPrototypeOf(probe) as {
    writev(bufs: Buffer[], ...rest: unknown[]): Promise<unknown>;
    datasync(): Promise<void>;
  };
  await probe.close();
  let finals = 0;
  let armed = false;
  const writev = proto.writev;
  proto.writev = function (this: unknown, bufs: Buffer[], ...rest: unknown[]) {
    for (const b of bufs) {
      if (!Buffer.isBuffer(b) || b.indexOf(FINAL) < 0) continue;
      finals++;
      if (finals === at) process.kill(process.pid, 'SIGKILL');
      if (finals === after) armed = true;
    }
    return writev.call(this, bufs, ...rest);
  };
  const datasync = proto.datasync;
  proto.datasync = async function (this: unknown) {
    await datasync.call(this);
    if (armed) setTimeout(() => process.kill(process.pid, 'SIGKILL'), 20);
  };
}
