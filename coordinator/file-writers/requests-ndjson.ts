// requests.ndjson: one JSON object per request from every agent, with absolute times as exact
// integer ns in the run's clock domain. Where alignment moved a time, the agent-local value (its
// run timeline before the offset) is kept beside it (`*_local_ns`), and every row carries the
// slew correction at its send and done, so the agent's raw clock readings can be audited too.
import { stringifyExact } from '../../shared/json.js';
import type { RequestRecord } from '../../shared/metrics.js';

/** How one agent's local offsets map into the run clock. */
export interface AgentTimebase {
  agentId: string;
  /** The shared start instant in the agent's own clock. */
  startLocalNs: bigint;
  /** Subtracted from agent-local times to align them (0 in an explicit common clock domain). */
  alignNs: bigint;
}

const TIME_FIELDS = [
  ['intended_ns', 'intended'],
  ['sent_ns', 'sent'],
  ['headers_ns', 'headers'],
  ['first_output_ns', 'first_output'],
  ['first_content_ns', 'first_content'],
  ['last_token_ns', 'last_token'],
  ['done_ns', 'done'],
] as const;

/** The ndjson line (with newline) of one record. */
export function formatRequestRow(r: RequestRecord, tb: AgentTimebase, plannedPromptTokens: number | null = null): string {
  const row: Record<string, unknown> = {
    agent_id: tb.agentId,
    class: r.class,
    request_index: r.request_index,
    status: r.status,
    http_status: r.http_status,
  };
  const local: Record<string, bigint | null> = {};
  for (const [field, name] of TIME_FIELDS) {
    const off = r[field];
    const localNs = off === null ? null : tb.startLocalNs + BigInt(Math.round(off));
    row[`${name}_unix_ns`] = localNs === null ? null : localNs - tb.alignNs;
    local[`${name}_local_ns`] = localNs;
  }
  Object.assign(row, {
    // The agent's raw clock stays recoverable: a stamp plus the correction its run timeline had
    // been slewed back by (agent/run.ts); between send and done, interpolated (run.json defines both).
    clock_correction_ns: r.clock_correction_ns ?? null,
    clock_correction_done_ns: r.clock_correction_done_ns ?? null,
    first_content_uncertainty_ns: r.first_content_uncertainty_ns ?? null,
    prompt_tokens: r.prompt_tokens,
    planned_prompt_tokens: plannedPromptTokens,
    completion_tokens: r.completion_tokens,
    output_token_source: r.output_token_source,
    cached_tokens: r.cached_tokens,
    reasoning_chunks: r.reasoning_chunks,
    content_chunks: r.content_chunks,
    request_canary: r.canary,
    retry_after_s: r.retry_after_s,
    dropped_reason: r.dropped_reason,
    error: r.error,
  });
  if (r.session_id !== undefined) Object.assign(row, { session_id: r.session_id, turn: r.turn });
  if (r.inputs !== undefined) row.inputs = r.inputs;
  if (r.model !== undefined) row.model = r.model;
  if (r.request_bytes !== undefined) row.request_bytes = r.request_bytes;
  if (r.tool_call_chunks !== undefined) {
    const first = r.first_tool_call_ns ?? null;
    Object.assign(row, {
      first_tool_call_unix_ns: first === null ? null : tb.startLocalNs + BigInt(Math.round(first)) - tb.alignNs,
      tool_call_chunks: r.tool_call_chunks,
      tool_calls: r.tool_calls ?? 0,
      tool_arguments_valid: r.tool_arguments_valid ?? null,
    });
  }
  if (tb.alignNs !== 0n) Object.assign(row, local);
  return `${stringifyExact(row)}\n`;
}
