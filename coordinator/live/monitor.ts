// Ties the live state to its outputs for one run: once a second a plain progress line or a
// redrawn terminal block, and on every scrape of /metrics the exposition. It only reads the run's
// state; the run never waits on it.
import type { Plan } from '../../shared/plan.js';
import type { GlobalSchedule } from '../../shared/schedule.js';
import { writeExposition } from './exposition.js';
import { liveFamilies } from './metric-families.js';
import type { MetricsEndpoint } from './metrics-server.js';
import { liveBlock, progressLine } from './render.js';
import type { AgentView, LiveSnapshot, ServerSource } from './state.js';
import { LiveState } from './state.js';

/** Where a run's live view goes. */
export interface LiveOutputs {
  /** Plain lines, one per second (used when `block` is absent). */
  progress(line: string): void;
  /** The terminal block, redrawn in place each second (stderr is a terminal). */
  block?: ((lines: string[]) => void) | undefined;
  /** The /metrics endpoint to serve this run's figures on. */
  metrics?: MetricsEndpoint | undefined;
  /** The latest scraped server sample (running, waiting, saturation), when something scrapes. */
  server?: ServerSource | undefined;
}

/** What the monitor reads from the run, all without side effects. */
export interface RunReadings {
  /** Seconds since the shared start instant (negative before it). */
  elapsedS(): number;
  agents(): AgentView[];
}

/** The live view of one run. */
export class LiveMonitor {
  /** Hand this to the collector as its listener. */
  readonly state: LiveState;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    plan: Plan,
    schedule: GlobalSchedule,
    runId: string,
    private readonly outputs: LiveOutputs,
    private readonly run: RunReadings,
  ) {
    this.state = new LiveState(plan, schedule, runId);
    outputs.metrics?.serve(() => writeExposition(liveFamilies(this.snapshot())));
  }

  /** The state now. */
  snapshot(): LiveSnapshot {
    return this.state.snapshot(this.run.elapsedS(), this.run.agents(), this.outputs.server?.latestServer() ?? null);
  }

  /** Starts the once-a-second view (at the start instant). */
  start(): void {
    this.timer = setInterval(() => this.show(), 1000);
  }

  /** Stops it; a terminal block is drawn once more with the final figures. */
  stop(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.outputs.block) this.show();
  }

  private show(): void {
    const s = this.snapshot();
    if (this.outputs.block) this.outputs.block(liveBlock(s));
    else this.outputs.progress(progressLine(s));
  }
}
