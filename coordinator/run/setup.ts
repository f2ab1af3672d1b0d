// What a run sets up before it talks to its agents: the embedded engine-sim when the plan names no
// target, prompt-length calibration on the target's tokenizer, a clean server cache if asked (last
// before the load: calibration's tokenize calls cache nothing), the server scraper, and with
// plan.traces the receiver of the server's spans (before the embedded engine-sim, which sends to it).
import type { Clock } from '../../shared/clock.js';
import type { Plan } from '../../shared/plan.js';
import type { CacheReset } from '../cache-reset.js';
import { resetServerCache } from '../cache-reset.js';
import { calibratePlan } from '../calibrate/index.js';
import type { LocalSim } from '../local.js';
import { startLocalSim } from '../local.js';
import { embeddedSimArgs, planAsRun } from '../plan.js';
import { Scraper } from '../scrape/scraper.js';
import { scrapeTargets } from '../scrape/targets.js';
import { RunTraces } from '../traces/run-traces.js';
import type { EmbeddedSim } from './embedded-sim.js';

/** What setUpTarget made; `cleanups` run last to first whatever happens after. */
export interface RunSetup {
  plan: Plan;
  cacheReset: CacheReset | undefined;
  scraper: Scraper;
  /** plan.traces: the run's span receiver. */
  traces: RunTraces | undefined;
  /** The embedded engine-sim's flags and environment (null: the plan names its target). */
  embeddedSim: EmbeddedSim | null;
}

/**
 * Starts what the run needs on the server side. `original`: the plan as given (its target decides
 * whether engine-sim is embedded); `withInputs`: with its trace and dataset files attached.
 * Each resource is pushed onto `cleanups` as soon as it exists, so a failure later releases it.
 */
export async function setUpTarget(
  original: Plan,
  withInputs: Plan,
  simArgs: readonly string[],
  runId: string,
  dir: string,
  clock: Clock,
  cleanups: (() => Promise<void>)[],
  log: (line: string) => void,
  resolved: (plan: Plan) => void,
): Promise<RunSetup> {
  let sim: LocalSim | undefined;
  let traces: RunTraces | undefined;
  let embeddedSim: EmbeddedSim | null = null;
  if (original.traces) {
    const started = await RunTraces.start(original.traces, runId, original, dir);
    traces = started;
    cleanups.unshift(() => started.close());
    const ports = started.ports();
    log(`receiving the server's spans: OTLP/HTTP on port ${ports.http}, OTLP/gRPC on port ${ports.grpc}`);
  }
  if (!original.target) {
    // The embedded engine-sim sends its spans to the receiver over OTLP/HTTP protobuf.
    const env: Record<string, string> = traces ? { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' } : {};
    embeddedSim = { args: embeddedSimArgs(original, simArgs, traces?.localHttpEndpoint), env };
    sim = await startLocalSim(embeddedSim.args, log, env);
    const started = sim;
    cleanups.push(() => started.stop());
    log(`engine-sim listening at ${sim.baseUrl}`);
  }
  const plan = await calibratePlan(planAsRun(withInputs, sim), runId, log);
  resolved(plan);
  const cacheReset = await resetServerCache(original.target, log);
  const scraper = new Scraper(scrapeTargets(original, sim), dir, clock, { plan });
  cleanups.unshift(() => scraper.close());
  return { plan, cacheReset, scraper, traces, embeddedSim };
}
