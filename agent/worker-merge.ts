// Folding the messages of an agent's worker threads into the ones one agent sends: interval
// counts add, histograms are merged (never percentiles), health keeps the worst figure.
import { addEncoded, encodeHistogram, newHistogram } from '../shared/histogram.js';
import type { AgentHealth, IntervalClass } from '../shared/protocol.js';
import { STALLS_KEPT } from './stall-log.js';

type Encoded = Record<string, string>;

function mergeEncoded(parts: readonly Encoded[]): Encoded {
  const out: Encoded = {};
  const metrics = new Set(parts.flatMap((p) => Object.keys(p)));
  for (const m of metrics) {
    const present = parts.map((p) => p[m]).filter((e): e is string => e !== undefined);
    if (present.length === 1) {
      out[m] = present[0]!;
      continue;
    }
    const h = newHistogram();
    for (const e of present) addEncoded(h, e);
    out[m] = encodeHistogram(h);
  }
  return out;
}

/** One second of several threads as one agent's interval. */
export function mergeIntervals(parts: readonly Record<string, IntervalClass>[]): Record<string, IntervalClass> {
  const out: Record<string, IntervalClass> = {};
  for (const cls of new Set(parts.flatMap((p) => Object.keys(p)))) {
    const of = parts.map((p) => p[cls]).filter((c): c is IntervalClass => c !== undefined);
    out[cls] = {
      issued: of.reduce((n, c) => n + c.issued, 0),
      completed: of.reduce((n, c) => n + c.completed, 0),
      failed: of.reduce((n, c) => n + c.failed, 0),
      histograms: mergeEncoded(of.map((c) => c.histograms)),
    };
  }
  return out;
}

type RunWindows = Record<string, Record<string, Encoded>>;

/** The threads' run histograms (class → window → metric) as one agent's. */
export function mergeRunWindows(parts: readonly RunWindows[]): RunWindows {
  const out: RunWindows = {};
  for (const cls of new Set(parts.flatMap((p) => Object.keys(p)))) {
    out[cls] = {};
    for (const w of new Set(parts.flatMap((p) => Object.keys(p[cls] ?? {})))) {
      out[cls][w] = mergeEncoded(parts.map((p) => p[cls]?.[w]).filter((e): e is Encoded => e !== undefined));
    }
  }
  return out;
}

function maxOrNull(values: readonly (number | null)[]): number | null {
  const present = values.filter((v): v is number => v !== null);
  return present.length > 0 ? Math.max(...present) : null;
}

/**
 * The threads' health as one agent's. A p99 cannot be merged from p99s, but the largest of them
 * bounds the p99 of the union from above (no thread has more than 1% of its values beyond it), so
 * the agent reports that bound. CPU is process-wide in every thread, so the largest reading is it.
 */
export function combineHealth(parts: readonly AgentHealth[]): AgentHealth {
  return {
    schedule_lag_p99_ms: maxOrNull(parts.map((h) => h.schedule_lag_p99_ms)),
    schedule_lag_max_ms: maxOrNull(parts.map((h) => h.schedule_lag_max_ms)),
    event_loop_delay_p99_ms: Math.max(0, ...parts.map((h) => h.event_loop_delay_p99_ms)),
    event_loop_delay_max_ms: Math.max(0, ...parts.map((h) => h.event_loop_delay_max_ms)),
    cpu_ms: Math.max(0, ...parts.map((h) => h.cpu_ms)),
    elu: Math.max(0, ...parts.map((h) => h.elu ?? 0)),
    stalls: parts
      .flatMap((h) => h.stalls ?? [])
      .sort((a, b) => b.ms - a.ms)
      .slice(0, STALLS_KEPT)
      .sort((a, b) => a.second - b.second),
  };
}
