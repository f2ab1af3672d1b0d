// Everything behind the HTTP front, built from options on a clock: the replicas (simple or vLLM
// model), the optional gateway, and their metrics. The server runs it on wall time; the offline
// fit (fit.ts) runs the very same objects on a virtual clock.
import { realClock, type SimClock } from './clock.js';
import { DisaggregatedPair } from './disaggregated.js';
import { Engine } from './engine.js';
import { Gateway } from './gateway.js';
import { GatewayMetrics } from './gateway-metrics.js';
import type { SimEngine } from './job.js';
import { type MetricFamily, SimMetrics } from './metrics.js';
import type { ResolvedSimOptions } from './options.js';
import { PROFILES } from './profile.js';
import { VllmEngine } from './vllm-engine.js';

/** The simulated serving stack. */
export interface SimPool {
  /** The in-process replicas (none in front of a real upstream); disaggregated, the decode replicas then the prefill ones. */
  readonly engines: readonly SimEngine[];
  /** Flow control, in gateway mode. */
  readonly gateway: Gateway | undefined;
  /** The replica a new request goes to: fewest waiting, then lowest KV usage, then fewest running. */
  pick(): SimEngine;
  /** The priority band of an objective name (unknown or absent: 0). */
  priorityOf(objective: string | undefined): number;
  /** The replicas' vLLM families. */
  replicaFamilies(): MetricFamily[];
  /** The gateway's llm-d families (none without a gateway). */
  gatewayFamilies(): MetricFamily[];
  /** Stops every replica. */
  stop(): void;
}

/** Builds the pool `options` describe; `startTimeS` is the process start time reported. */
export function buildPool(options: ResolvedSimOptions, clock: SimClock = realClock, startTimeS = Date.now() / 1000): SimPool {
  const count = options.upstream === '' ? options.replicas : 0;
  const prefillCount = count > 0 ? options.prefillReplicas : 0;
  const total = count + prefillCount;
  const metrics = Array.from(
    { length: total },
    (_, i) => new SimMetrics(options.model, startTimeS, total > 1 ? { engine: String(i) } : {}),
  );
  const engines = metrics.map((m) => newEngine(options, m, clock));
  const decodes = engines.slice(0, count);
  const prefills = engines.slice(count);
  const transfer = { fixedS: options.kvTransferMs / 1000, perTokenS: options.kvTransferUsPerToken / 1e6 };
  const gatewayMetrics = options.gateway ? new GatewayMetrics(options.model) : undefined;
  const gateway = gatewayMetrics
    ? new Gateway(
        {
          maxConcurrency: options.maxConcurrency * Math.max(1, count),
          headroom: options.headroom,
          queueTimeoutS: options.queueTimeoutS,
          queueCapacity: options.queueCapacity,
        },
        clock,
        gatewayMetrics,
      )
    : undefined;
  return {
    engines,
    gateway,
    pick: () =>
      prefills.length > 0 ? new DisaggregatedPair(leastLoaded(prefills), leastLoaded(decodes), clock, transfer) : leastLoaded(engines),
    priorityOf: (objective) => (objective === undefined ? 0 : (options.objectives[objective] ?? 0)),
    replicaFamilies: () =>
      engines.flatMap((e, i) => metrics[i]!.families({ running: e.runningCount, waiting: e.waitingCount, kvUsage: e.kvUsage })),
    gatewayFamilies: () => {
      if (!gateway || !gatewayMetrics) return [];
      const mean = (f: (e: SimEngine) => number) => engines.reduce((sum, e) => sum + f(e), 0) / engines.length;
      const replicas =
        engines.length > 0
          ? { waiting: mean((e) => e.waitingCount), kvUsage: mean((e) => e.kvUsage), running: mean((e) => e.runningCount) }
          : undefined;
      return gatewayMetrics.families({ saturation: gateway.saturation, ...(replicas ? { replicas } : {}) });
    },
    stop: () => {
      for (const e of engines) e.stop();
    },
  };
}

function newEngine(options: ResolvedSimOptions, metrics: SimMetrics, clock: SimClock): SimEngine {
  if (options.engine === 'simple') return new Engine(options, metrics);
  const config = {
    maxNumSeqs: options.maxNumSeqs,
    maxNumBatchedTokens: options.maxNumBatchedTokens,
    kvCacheTokens: options.kvCacheTokens,
    prefixCaching: options.enablePrefixCaching,
    scheduling: options.scheduling,
    profile: PROFILES[options.profile]!,
  };
  return new VllmEngine(config, metrics, clock);
}

function leastLoaded(engines: readonly SimEngine[]): SimEngine {
  let best = engines[0]!;
  for (const e of engines) {
    const better =
      e.waitingCount < best.waitingCount ||
      (e.waitingCount === best.waitingCount &&
        (e.kvUsage < best.kvUsage || (e.kvUsage === best.kvUsage && e.runningCount < best.runningCount)));
    if (better) best = e;
  }
  return best;
}
