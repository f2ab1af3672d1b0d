// Pure: which value the next stage runs, given the sweep's strategy, its stop rules and the
// outcomes so far — or why the sweep stops. No clocks and no processes, so every rule is tested
// with made-up outcomes. (The time budget needs the clock; it is budget.ts.)
import type { SweepScale, SweepStrategy } from '../../shared/sweep.js';
import { SWEEP_DEFAULTS } from '../../shared/sweep.js';

/** How a finished stage came out. `error`: the stage could not be run or measured (the run aborted). */
export type Verdict = 'pass' | 'fail' | 'client_limited' | 'error';

/** What the strategy needs to know about a finished stage. */
export interface Outcome {
  value: number;
  verdict: Verdict;
  /** Failed requests / requests of the scaled class in the measured window (null: none measured). */
  errorShare: number | null;
  /** Why the stage came out so (carried into the stop reason of an error). */
  reason?: string;
}

/** The stop rules with defaults filled in. */
export interface Rules {
  maxFailingStages: number;
  maxErrorShare: number;
  maxValue: number | null;
}

/** Which rule ended the sweep. */
export type StopRule =
  | 'done'
  | 'max_failing_stages'
  | 'max_error_share'
  | 'max_value'
  | 'time_budget'
  | 'client_limited'
  | 'endpoint_failed'
  | 'fleet_short'
  | 'out_of_range'
  | 'interrupted';

/**
 * How many times a client-limited stage is measured again before the sweep stops: the client's
 * trouble may be passing (a neighbour process, a stall), and a stage the client limited says
 * nothing about the server either way.
 */
export const CLIENT_LIMITED_REMEASURES = 2;

/** Either the next stage's value or the end of the sweep. */
export type Step = { kind: 'run'; value: number } | { kind: 'stop'; rule: StopRule; reason: string };

/** Fills in the default stop rules. */
export function rulesOf(stop: { max_failing_stages?: number; max_error_share?: number; max_value?: number } | undefined): Rules {
  return {
    maxFailingStages: stop?.max_failing_stages ?? SWEEP_DEFAULTS.max_failing_stages,
    maxErrorShare: stop?.max_error_share ?? SWEEP_DEFAULTS.max_error_share,
    maxValue: stop?.max_value ?? null,
  };
}

/** The next step after `done` (in the order run). */
export function nextStep(strategy: SweepStrategy, scale: SweepScale, rules: Rules, done: readonly Outcome[]): Step {
  const last = done.at(-1);
  if (last?.verdict === 'client_limited') {
    // Measured again at the same value, a bounded number of times; then the sweep stops, saying why.
    let tries = 0;
    for (let i = done.length - 1; i >= 0 && done[i]!.verdict === 'client_limited' && done[i]!.value === last.value; i--) tries++;
    if (tries <= CLIENT_LIMITED_REMEASURES) return run(last.value);
    return stop(
      'client_limited',
      `the stage at ${fmt(last.value)} was client-limited in all ${tries} measurements (the first and ${CLIENT_LIMITED_REMEASURES} re-measures)${last.reason ? `, the last: ${last.reason}` : ''}`,
    );
  }
  // Bisect never runs above a value already run, so failing stages and their errors only narrow the
  // bracket there: the failing-stage and error-share rules guard the escalating strategies.
  const escalating = strategy.type !== 'bisect';
  if (last) {
    const stop = stopAfter(last, rules, escalating);
    if (stop) return stop;
  }
  const failing = done.filter((o) => o.verdict === 'fail').length;
  if (escalating && failing >= rules.maxFailingStages)
    return stop(
      'max_failing_stages',
      `${failing} failing stage${failing === 1 ? '' : 's'} (max_failing_stages ${rules.maxFailingStages}): no heavier stage is started`,
    );
  // A client-limited measurement decided nothing: the strategies see the stages that did.
  const step = strategyStep(
    strategy,
    scale,
    done.filter((o) => o.verdict !== 'client_limited'),
  );
  if (step.kind === 'run' && rules.maxValue !== null && step.value > rules.maxValue)
    return stop('max_value', `the next value ${fmt(step.value)} is above max_value ${fmt(rules.maxValue)}`);
  return step;
}

// Rules that end the sweep whatever the strategy would do next.
function stopAfter(last: Outcome, rules: Rules, escalating: boolean): Step | undefined {
  if (last.verdict === 'error')
    return stop('endpoint_failed', `the stage at ${fmt(last.value)} could not be run or measured${last.reason ? `: ${last.reason}` : ''}`);
  if (escalating && last.errorShare !== null && last.errorShare > rules.maxErrorShare)
    return stop(
      'max_error_share',
      `the stage at ${fmt(last.value)} failed ${pct(last.errorShare)} of its requests (> max_error_share ${pct(rules.maxErrorShare)})`,
    );
  return undefined;
}

function strategyStep(strategy: SweepStrategy, scale: SweepScale, done: readonly Outcome[]): Step {
  switch (strategy.type) {
    case 'stages': {
      const next = strategy.values[done.length];
      return next === undefined ? stop('done', `all ${strategy.values.length} listed stages ran`) : run(next);
    }
    case 'geometric': {
      const last = done.at(-1);
      if (!last) return run(strategy.start);
      const next = grow(last.value, strategy.factor, scale);
      return next > strategy.max ? stop('done', `the next value ${fmt(next)} is above the strategy's max ${fmt(strategy.max)}`) : run(next);
    }
    case 'bisect':
      return bisectStep(strategy, scale, done);
  }
}

// Concurrency grows by at least one so a small start with a small factor still moves.
function grow(value: number, factor: number, scale: SweepScale): number {
  return scale === 'concurrency' ? Math.max(value + 1, Math.round(value * factor)) : round3(value * factor);
}

// Bisect measures both ends first (a bracket that was only assumed is no bracket), then halves.
function bisectStep(s: { pass: number; fail: number; resolution: number }, scale: SweepScale, done: readonly Outcome[]): Step {
  const at = (v: number): Outcome | undefined => done.find((o) => o.value === v);
  const low = at(s.pass);
  if (!low) return run(s.pass);
  if (low.verdict === 'fail') return stop('out_of_range', `the lower end ${fmt(s.pass)} already fails: the capacity is below the range`);
  const high = at(s.fail);
  if (!high) return run(s.fail);
  if (high.verdict === 'pass') return stop('out_of_range', `the upper end ${fmt(s.fail)} passes: the capacity is above the range`);
  const lo = Math.max(...done.filter((o) => o.verdict === 'pass').map((o) => o.value));
  const hi = Math.min(...done.filter((o) => o.verdict === 'fail' && o.value > lo).map((o) => o.value));
  if (hi - lo <= s.resolution) return stop('done', `the bracket [${fmt(lo)}, ${fmt(hi)}] is within the resolution ${fmt(s.resolution)}`);
  const mid = scale === 'concurrency' ? Math.floor((lo + hi) / 2) : round3((lo + hi) / 2);
  if (mid <= lo || mid >= hi) return stop('done', `no value lies between ${fmt(lo)} and ${fmt(hi)}`);
  return run(mid);
}

function run(value: number): Step {
  return { kind: 'run', value };
}

function stop(rule: StopRule, reason: string): Step {
  return { kind: 'stop', rule, reason };
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

export function fmt(x: number): string {
  return String(round3(x));
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

/** The unit a scale's values are in, for sentences. */
export function scaleUnit(scale: SweepScale): string {
  return scale === 'rate' ? 'req/s' : scale === 'speed' ? '× trace speed' : 'concurrency';
}
