// A Hugging Face tokenizer read from local files (the plan's `target.tokenizer`: a tokenizer.json,
// with tokenizer_config.json beside it when there is one), through @huggingface/tokenizers. The
// coordinator counts prompts with it when the target has no tokenize endpoint; agents count the
// streamed text with it when the server sends no usage. The chat template (tokenizer_config.json's
// `chat_template`, rendered with @huggingface/jinja) is applied as the server applies it, so the
// whole chat request is counted.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Template } from '@huggingface/jinja';
import { Tokenizer } from '@huggingface/tokenizers';
import { chatTemplated } from './api-kinds.js';
import { hubTokenizer, modelIdOf } from './hf-hub.js';
import type { ApiKind, ChatMessage } from './plan.js';
import { completionPrompt } from './request-text.js';

/** A tokenizer loaded from files. */
export interface TokenizerFile {
  /** Tokens of one whole request of `api` whose prompt text is `text`, or whose messages are these (template applied where the API has one: chatTemplated). */
  countRequest(text: string | readonly ChatMessage[], api: ApiKind): number;
  /** Tokens of generated text (no special tokens added). */
  countOutput(text: string): number;
  /** What was loaded, e.g. whether a chat template was found. */
  note: string;
}

/**
 * Loads `spec` — a tokenizer.json path, or a Hugging Face model id fetched once into the hub cache
 * (hf-hub.ts) — and the tokenizer_config.json beside it, if any; throws a readable error.
 */
export async function loadTokenizerFile(spec: string): Promise<TokenizerFile> {
  const id = modelIdOf(spec);
  const hub = id ? await hubTokenizer(id) : undefined;
  const path = hub?.path ?? spec;
  const tokenizerJson = await readJson(path, true);
  const config = (await readJson(join(dirname(path), 'tokenizer_config.json'), false)) ?? {};
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(tokenizerJson!, config);
  } catch (err) {
    throw new Error(`${path} is not a tokenizer.json this library reads: ${(err as Error).message}`);
  }
  const template = chatTemplate(config);
  const special = { bos_token: tokenText(config.bos_token), eos_token: tokenText(config.eos_token) };
  const count = (text: string, addSpecial: boolean): number => tokenizer.encode(text, { add_special_tokens: addSpecial }).ids.length;
  return {
    countRequest(text, api) {
      const messages = typeof text === 'string' ? [{ role: 'user', content: text }] : text;
      if (!chatTemplated(api) || !template) return count(completionPrompt(messages), true);
      // Like the servers: the rendered template carries its own special tokens.
      return count(template.render({ messages: messages as ChatMessage[], add_generation_prompt: true, ...special }), false);
    },
    countOutput: (text) => count(text, false),
    note: `${hub ? hub.note : path}${template ? ' with its chat template' : ' (no chat template found: a chat request counts its text alone)'}`,
  };
}

async function readJson(path: string, required: boolean): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (!required && (err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${path} is not JSON: ${(err as Error).message}`);
  }
}

// chat_template is a string, or a list of named templates of which "default" is the chat one.
function chatTemplate(config: Record<string, unknown>): Template | undefined {
  let source = config.chat_template;
  if (Array.isArray(source)) {
    const named = source as { name?: unknown; template?: unknown }[];
    source = (named.find((t) => t.name === 'default') ?? named[0])?.template;
  }
  return typeof source === 'string' ? new Template(source) : undefined;
}

// Special tokens appear as a string or as an AddedToken object with `content`.
function tokenText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && v !== null && typeof (v as { content?: unknown }).content === 'string')
    return (v as { content: string }).content;
  return '';
}
