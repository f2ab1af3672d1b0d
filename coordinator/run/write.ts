// The end of a run: the collector and the scraper closed (and the server's spans joined), run.json written from everything the run
// holds (its channels included), then report.html as a view of it.

import { writeBenchmarkReports } from '../../results/benchmark-report-write.js';
import { writeRunReport } from '../../results/report/index.js';
import { formatError } from '../../shared/errors.js';
import { writeRunJson } from '../artifacts/run-json.js';
import { endRunTraces } from '../traces/finish.js';
import type { RunState } from './context.js';
import type { RunResult } from './options.js';

/** Writes the run directory and returns what the CLI reports. */
export async function writeAndSummarize(run: RunState): Promise<RunResult> {
  run.moveRun('closing');
  // Everything taken is on disk (and acknowledged) before the collector closes; nothing after is taken.
  if (run.journal) {
    await run.journal.flush();
    if (run.journal.failure) throw run.journal.failure;
    run.journal.event({ type: 'closing', at_s: run.elapsedS() });
  }
  const c = run.collector!;
  await c.close();
  await run.scraper.stop();
  await run.scraper.snapshot('post');
  await run.scraper.close();
  const startNs = run.runStartNs();
  const finishedNs = startNs + BigInt(Math.round(c.lastDoneNs));
  const completed = [...c.agentTotals.values()].reduce((n, t) => n + t.completed, 0);
  const traceOpts = {
    dir: run.dir,
    runId: run.runId,
    plan: run.plan,
    runStartNs: startNs,
    runEndNs: finishedNs,
    completed,
    log: run.opts.log,
  };
  const serverSpans = run.traces && (await endRunTraces(run.traces, traceOpts));
  run.wroteRunJson = true;
  const written = await writeRunJson({
    dir: run.dir,
    runId: run.runId,
    plan: run.plan,
    schedule: run.schedule,
    collector: c,
    states: run.states,
    startNs,
    finishedNs: finishedNs > startNs ? finishedNs : run.clock.nowNs(),
    decision: run.decision!,
    coordinatorAnchorUncertaintyNs: run.clock.anchorUncertaintyNs,
    abortReason: run.abortReason,
    runEvents: run.runEvents,
    maxStartSkewNs: run.opts.maxStartSkewNs,
    clockToleranceNs: run.opts.clockToleranceNs,
    scrapes: run.scraper.summary(),
    headroom: run.headroom,
    localLayout: run.localLayout,
    ...(run.recovery && { recovered: run.recovery }),
    ...(run.cacheReset && { cacheReset: run.cacheReset }),
    ...(serverSpans && { serverSpans }),
    ...(run.opts.expectFlowControlEngaged === undefined ? {} : { expectFlowControlEngaged: run.opts.expectFlowControlEngaged }),
    ...(run.opts.experiment && { experiment: run.opts.experiment }),
  });
  // The report is a view of the artifacts just written: its failure must never cost the run.
  await writeRunReport(run.dir).catch((err: unknown) => run.opts.log(`report.html not written: ${formatError(err)}`));
  await writeBenchmarkReports(run.dir).catch((err: unknown) => run.opts.log(`benchmark-report not written: ${formatError(err)}`));
  // The directory is complete and flushed: the journal has nothing left to protect.
  await run.journal?.retire(run.dir);
  return { dir: run.dir, status: written.status, summaryLines: written.summaryLines };
}
