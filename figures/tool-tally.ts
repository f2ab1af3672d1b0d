// Tool calling per class (prompt.tools): how many successful responses called a tool, how soon
// the first tool-call delta came, and whether each response's call arguments were valid JSON
// (checked by the agent over its bounded capture) — a data-quality figure. Pure; exact over
// every record (the times go to the run's bounded exact store).
import type { RequestRecord } from '../shared/metrics.js';
import type { ExactSummary } from './exact/rank-select.js';
import { exactQuantile } from './exact/rank-select.js';
import type { ExactSink } from './exact/series-values.js';
import { SeriesValues } from './exact/series-values.js';

/** One sentence per field of classes.<c>.tool_calls. */
export const TOOL_DEFINITIONS: Record<string, string> = {
  'classes.<c>.tool_calls':
    'a class offering tools (prompt.tools), over its successful requests: responses_with_tool_calls, tool_calls (calls streamed), arguments_valid and arguments_invalid (responses whose every call, or some call, had arguments that are not JSON once their streamed fragments are joined), arguments_unchecked (the bounded capture missed part of the response), and time_to_first_tool_call_p50_ms and _mean_ms (first tool-call delta − sent, exact)',
};

/** The tally of one class. */
export class ToolTally {
  private responses = 0;
  private calls = 0;
  private valid = 0;
  private invalid = 0;
  private unchecked = 0;
  /** Time to first tool call (ns): the exact sink's series, their count and sum (for the mean). */
  private readonly firstSeries: number;
  private firstCount = 0;
  private firstSumNs = 0;
  private exact: readonly (ExactSummary | null)[] | null = null;

  /** `sink`: the run's bounded exact store, or (alone) memory. */
  constructor(private readonly sink: ExactSink = new SeriesValues()) {
    this.firstSeries = sink.newSeries();
  }

  /** The run's exact summaries, once its store has computed them (before `summary`). */
  setExact(summaries: readonly (ExactSummary | null)[]): void {
    this.exact = summaries;
  }

  add(r: RequestRecord): void {
    if (r.status !== 'ok' || !r.tool_calls) return;
    this.responses++;
    this.calls += r.tool_calls;
    if (r.tool_arguments_valid === true) this.valid++;
    else if (r.tool_arguments_valid === false) this.invalid++;
    else this.unchecked++;
    if (r.first_tool_call_ns !== null && r.first_tool_call_ns !== undefined) {
      const ns = r.first_tool_call_ns - r.sent_ns;
      this.sink.add(this.firstSeries, ns);
      this.firstCount++;
      this.firstSumNs += ns;
    }
  }

  /** classes.<c>.tool_calls. */
  summary(): Record<string, unknown> {
    const exact = this.exact ?? (this.sink instanceof SeriesValues ? this.sink.summaries() : null);
    if (!exact) throw new Error('tool-call figures read before the exact store computed them');
    const first = exact[this.firstSeries] ?? null;
    const p50 = first ? exactQuantile(first, 0.5) : null;
    const mean = this.firstCount > 0 ? this.firstSumNs / this.firstCount : null;
    return {
      responses_with_tool_calls: this.responses,
      tool_calls: this.calls,
      arguments_valid: this.valid,
      arguments_invalid: this.invalid,
      arguments_unchecked: this.unchecked,
      time_to_first_tool_call_p50_ms: p50 === null ? null : Math.round(p50 / 1e3) / 1e3,
      time_to_first_tool_call_mean_ms: mean === null ? null : Math.round(mean / 1e3) / 1e3,
    };
  }
}
