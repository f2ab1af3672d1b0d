// Bounded capture of a response's streamed text, for what needs the words themselves: counting the
// output with a tokenizer when the server sends no usage, and checking canaries. The raw event
// payloads are kept (no parsing while the stream runs, so timestamps stay cheap) and parsed once
// at the end. Past the cap the capture is incomplete, and whatever reads it must fail closed.
import type { ApiAdapter } from './api/adapter.js';

/** Text kept per request at most (UTF-16 code units of raw event payloads). */
export const MAX_CAPTURE_CHARS = 1 << 20;

/** The text a response streamed. */
export interface CapturedText {
  /** Content (the visible answer). */
  visible: string;
  /** Reasoning deltas. */
  reasoning: string;
  /** False when the cap was reached or an event could not be read: the text is not all there. */
  complete: boolean;
  /** Each tool call's arguments, joined from its fragments, by call index (absent without calls). */
  toolArguments?: string[];
  /** Each tool call's id and function name (from its first delta), by call index, beside toolArguments. */
  toolHeads?: { id: string; name: string }[];
}

/** Collects event payloads of one response up to a cap. */
export class TextCapture {
  private readonly events: string[] = [];
  private chars = 0;
  private overflow = false;

  constructor(
    private readonly adapter: ApiAdapter,
    private readonly cap = MAX_CAPTURE_CHARS,
  ) {}

  /** Keeps one content or reasoning event's payload. */
  add(data: string): void {
    if (this.overflow) return;
    this.chars += data.length;
    if (this.chars > this.cap) {
      this.overflow = true;
      return;
    }
    this.events.push(data);
  }

  /** Parses what was kept into visible and reasoning text. */
  text(): CapturedText {
    let visible = '';
    let reasoning = '';
    let complete = !this.overflow;
    const toolArguments: string[] = [];
    const toolHeads: { id: string; name: string }[] = [];
    for (const data of this.events) {
      try {
        const parts = this.adapter.deltaText(JSON.parse(data));
        visible += parts.visible;
        reasoning += parts.reasoning;
        for (const t of parts.toolArguments ?? []) {
          toolArguments[t.index] = (toolArguments[t.index] ?? '') + t.arguments;
          toolHeads[t.index] ??= { id: '', name: '' };
          const head = toolHeads[t.index]!;
          if (t.id !== undefined) head.id = t.id;
          if (t.name !== undefined) head.name = t.name;
        }
      } catch {
        complete = false;
      }
    }
    if (toolArguments.length === 0) return { visible, reasoning, complete };
    // The calls in index order, holes left out: an API whose index counts every content block
    // (the Messages API's text block before a call) has none of its calls at the text's index.
    const indices = Object.keys(toolArguments).map(Number);
    const heads = indices.map((i) => toolHeads[i] ?? { id: '', name: '' });
    return { visible, reasoning, complete, toolArguments: indices.map((i) => toolArguments[i]!), toolHeads: heads };
  }
}
