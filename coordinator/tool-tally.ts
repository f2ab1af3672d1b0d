// Tool calling per class (prompt.tools): how many successful responses called a tool, how soon
// the first tool-call delta came, and whether each response's call arguments were valid JSON
// (checked by the agent over its bounded capture) — a data-quality figure. Pure; exact over
// every record.
import type { RequestRecord } from '../shared/metrics.js';

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
  private readonly firstNs: number[] = [];

  add(r: RequestRecord): void {
    if (r.status !== 'ok' || !r.tool_calls) return;
    this.responses++;
    this.calls += r.tool_calls;
    if (r.tool_arguments_valid === true) this.valid++;
    else if (r.tool_arguments_valid === false) this.invalid++;
    else this.unchecked++;
    if (r.first_tool_call_ns !== null && r.first_tool_call_ns !== undefined) this.firstNs.push(r.first_tool_call_ns - r.sent_ns);
  }

  /** classes.<c>.tool_calls. */
  summary(): Record<string, unknown> {
    const sorted = [...this.firstNs].sort((a, b) => a - b);
    const p50 = sorted.length > 0 ? sorted[Math.ceil(0.5 * sorted.length) - 1]! : null;
    const mean = sorted.length > 0 ? sorted.reduce((a, b) => a + b, 0) / sorted.length : null;
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
