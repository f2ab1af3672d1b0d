// One worker thread of `agent --workers N`: runs its part of the agent's share with its own
// event loop, undici pool and recorder, and relays every protocol message to the main thread.
import { parentPort, workerData } from 'node:worker_threads';
import { clockFromAnchor } from '../shared/clock.js';
import { AgentRun } from './run.js';
import type { SpoolTarget } from './share-runner.js';
import type { ThreadCommand, ThreadEvent, ThreadInit } from './thread-messages.js';

const init = workerData as ThreadInit;
const port = parentPort!;
const post = (e: ThreadEvent): void => port.postMessage(e);

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

let run: AgentRun | undefined;
let setupError = '';
try {
  run = new AgentRun(
    init.runId,
    init.plan,
    init.share,
    clockFromAnchor(init.anchor),
    (msg) => post({ kind: 'msg', msg }),
    init.fleetAgents,
  );
} catch (err) {
  setupError = describe(err);
}

async function prepare(spool: SpoolTarget): Promise<void> {
  const note = await run!.prepare(spool, `.w${init.part}`);
  post({ kind: 'prepared', note, planned: run!.plannedRequests(), warmUp: run!.warmUp() });
}

async function start(startLocalNs: bigint): Promise<void> {
  await run!.start(startLocalNs);
  post({ kind: 'ended' });
}

async function discard(): Promise<void> {
  await run!.discardSpool();
  post({ kind: 'ended' });
}

port.on('message', (c: ThreadCommand) => {
  if (!run) {
    post({ kind: 'failed', message: setupError });
    return;
  }
  const failed = (err: unknown): void => post({ kind: 'failed', message: describe(err) });
  switch (c.cmd) {
    case 'prepare':
      prepare(c.spool).catch(failed);
      return;
    case 'start':
      start(c.startLocalNs).catch(failed);
      return;
    case 'slew':
      run.slew(c.ratePpm);
      return;
    case 'stop':
      run.stop(c.reason);
      return;
    case 'link-lost':
      run.linkLost(c.reason);
      return;
    case 'discard':
      discard().catch(failed);
      return;
  }
});
