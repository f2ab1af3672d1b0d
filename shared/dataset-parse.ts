// Prompt datasets read into records: JSONL `{prompt | messages, output_tokens?}` per line, or a
// ShareGPT-style JSON array of `{conversations: [{from, value}]}` (the first human turn is the
// prompt, the reply after it gives output_tokens, as vLLM's benchmark reads it).
import type { ChatMessage, DatasetRecord, DatasetSpec } from './plan.js';
import { jsonObjectLine } from './trace-parse.js';

/** Records read from a dataset file, or the problems found ("line N: …"). */
export interface ParsedDataset {
  records: DatasetRecord[];
  /** Records in the file (blank lines excluded). */
  inFile: number;
  problems: string[];
}

const MAX_PROBLEMS = 20;

/** Words of a record's prompt: the token count engine-sim sees (a real tokenizer differs). */
export function recordWords(r: DatasetRecord): number {
  const text = r.prompt ?? (r.messages ?? []).map((m) => m.content).join(' ');
  const t = text.trim();
  return t === '' ? 0 : t.split(/\s+/).length;
}

/** Parses a dataset file's text. */
export function parseDataset(text: string, format: DatasetSpec['format']): ParsedDataset {
  return format === 'jsonl' ? parseJsonl(text) : parseShareGpt(text);
}

function parseJsonl(text: string): ParsedDataset {
  const out: ParsedDataset = { records: [], inFile: 0, problems: [] };
  const all = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (let i = 0; i < all.length; i++) {
    if (all[i]!.trim() === '') continue;
    out.inFile++;
    const r = jsonlRecord(all[i]!, i + 1);
    if (typeof r !== 'string') out.records.push(r);
    else if (out.problems.length < MAX_PROBLEMS) out.problems.push(`line ${i + 1}: ${r}`);
  }
  return out;
}

// One record, or what is wrong with it.
function jsonlRecord(raw: string, line: number): DatasetRecord | string {
  const o = jsonObjectLine(raw);
  if (typeof o === 'string') return o;
  const outTokens = o.output_tokens;
  if (outTokens !== undefined && !(Number.isSafeInteger(outTokens) && (outTokens as number) >= 1))
    return '"output_tokens" must be an integer >= 1';
  const base = { line, ...(outTokens !== undefined && { output_tokens: outTokens as number }) };
  if (typeof o.prompt === 'string' && o.prompt.trim() !== '' && o.messages === undefined) return { ...base, prompt: o.prompt };
  const messages = chatMessages(o.messages);
  if (messages && o.prompt === undefined) return { ...base, messages };
  return 'must have exactly one of "prompt" (a non-empty string) or "messages" (a non-empty array of {role, content} strings)';
}

function chatMessages(v: unknown): ChatMessage[] | undefined {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  const ok = v.every((m) => typeof m === 'object' && m !== null && typeof m.role === 'string' && typeof m.content === 'string');
  return ok ? v.map((m: ChatMessage) => ({ role: m.role, content: m.content })) : undefined;
}

function parseShareGpt(text: string): ParsedDataset {
  const out: ParsedDataset = { records: [], inFile: 0, problems: [] };
  let v: unknown;
  try {
    v = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    out.problems.push(`invalid JSON (${(err as Error).message})`);
    return out;
  }
  if (!Array.isArray(v)) {
    out.problems.push('must be a JSON array of {"conversations": [{"from", "value"}]}');
    return out;
  }
  out.inFile = v.length;
  v.forEach((item, i) => {
    const turns = (item as { conversations?: unknown })?.conversations;
    if (!Array.isArray(turns)) {
      if (out.problems.length < MAX_PROBLEMS) out.problems.push(`[${i}]: lacks a "conversations" array`);
      return;
    }
    // Conversations without a human turn have no prompt: kept out (the count shows in rows_used).
    const at = turns.findIndex((t) => t?.from === 'human' && typeof t.value === 'string' && t.value.trim() !== '');
    if (at < 0) return;
    const reply = turns[at + 1];
    const words = typeof reply?.value === 'string' ? reply.value.trim().split(/\s+/).filter(Boolean).length : 0;
    out.records.push({ line: i + 1, prompt: turns[at].value as string, ...(words > 0 && { output_tokens: words }) });
  });
  return out;
}
