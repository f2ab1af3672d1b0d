// A tiny but real GGUF model, written by the test (no model hub here): llama architecture, one
// layer, 64-wide, seeded random weights, and a byte-level BPE tokenizer whose merges make a space
// plus a short English word one token (longer words cost a token per letter), with special tokens
// and a chat template. llama.cpp (through node-llama-cpp) loads it and generates real tokens with
// real attention; its text is noise, which no timing or token count cares about.
import { writeFileSync } from 'node:fs';

enum Kind {
  U32 = 4,
  I32 = 5,
  F32 = 6,
  BOOL = 7,
  STR = 8,
  ARR = 9,
}
type Value =
  | [Kind.U32 | Kind.F32, number]
  | [Kind.BOOL, boolean]
  | [Kind.STR, string]
  | [Kind.ARR, Kind.STR, string[]]
  | [Kind.ARR, Kind.I32, number[]];

/** The chat template stored in the model (llama.cpp applies it for chat requests). */
export const TINY_CHAT_TEMPLATE =
  "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}";
const SPECIAL = ['<s>', '</s>', '<|user|>', '<|assistant|>', '<|end|>'];
const SHORT_WORDS =
  'the of and to in is was for on are as be at by had not but or an we her she if so no can out up two may do any my now our man me did how too way'.split(
    ' ',
  );
const N_EMBD = 64;
const N_FF = 128;
const N_HEAD = 4;
const ALIGN = 32;

class Writer {
  private readonly parts: Buffer[] = [];
  bytes(b: Buffer): void {
    this.parts.push(b);
  }
  num(v: number | bigint, size: 4 | 8, write: (b: Buffer, v: never) => void): void {
    const b = Buffer.alloc(size);
    write(b, v as never);
    this.parts.push(b);
  }
  u32(v: number): void {
    this.num(v, 4, (b, x: number) => b.writeUInt32LE(x));
  }
  u64(v: number): void {
    this.num(BigInt(v), 8, (b, x: bigint) => b.writeBigUInt64LE(x));
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.parts.push(b);
  }
  value(v: Value): void {
    this.u32(v[0]);
    if (v[0] === Kind.STR) this.str(v[1]);
    else if (v[0] === Kind.BOOL) this.bytes(Buffer.from([v[1] ? 1 : 0]));
    else if (v[0] === Kind.U32) this.u32(v[1]);
    else if (v[0] === Kind.F32) this.num(v[1], 4, (b, x: number) => b.writeFloatLE(x));
    else {
      const items: readonly (string | number)[] = v[2] ?? [];
      this.u32(v[1]);
      this.u64(items.length);
      for (const e of items) {
        if (typeof e === 'string') this.str(e);
        else this.num(e, 4, (b, x: number) => b.writeInt32LE(x));
      }
    }
  }
  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

// GPT-2's reversible byte → printable character map, which byte-level BPE vocabularies use.
function byteChars(): string[] {
  const keep = new Set<number>();
  for (const [a, b] of [
    [33, 126],
    [161, 172],
    [174, 255],
  ] as const)
    for (let x = a; x <= b; x++) keep.add(x);
  let n = 0;
  return Array.from({ length: 256 }, (_, b) => String.fromCodePoint(keep.has(b) ? b : 256 + n++));
}

function vocabulary(): { tokens: string[]; types: number[]; merges: string[] } {
  const tokens = [...SPECIAL, ...byteChars()];
  const types = tokens.map((_, i) => (i < SPECIAL.length ? 3 : 1)); // 3: control, 1: normal
  const merges: string[] = [];
  const have = new Set(tokens);
  for (const w of SHORT_WORDS) {
    let acc = 'Ġ';
    for (const ch of w) {
      if (!merges.includes(`${acc} ${ch}`)) merges.push(`${acc} ${ch}`);
      acc += ch;
      if (!have.has(acc)) {
        have.add(acc);
        tokens.push(acc);
        types.push(1);
      }
    }
  }
  return { tokens, types, merges };
}

/** Writes the model to `path`. */
export function writeTinyGguf(path: string): void {
  const { tokens, types, merges } = vocabulary();
  const metadata: [string, Value][] = [
    ['general.architecture', [Kind.STR, 'llama']],
    ['general.name', [Kind.STR, 'loadfleet-tiny']],
    ['general.alignment', [Kind.U32, ALIGN]],
    ['llama.context_length', [Kind.U32, 4096]],
    ['llama.embedding_length', [Kind.U32, N_EMBD]],
    ['llama.block_count', [Kind.U32, 1]],
    ['llama.feed_forward_length', [Kind.U32, N_FF]],
    ['llama.attention.head_count', [Kind.U32, N_HEAD]],
    ['llama.attention.head_count_kv', [Kind.U32, N_HEAD]],
    ['llama.attention.layer_norm_rms_epsilon', [Kind.F32, 1e-5]],
    ['llama.rope.dimension_count', [Kind.U32, N_EMBD / N_HEAD]],
    ['tokenizer.ggml.model', [Kind.STR, 'gpt2']],
    ['tokenizer.ggml.pre', [Kind.STR, 'default']],
    ['tokenizer.ggml.tokens', [Kind.ARR, Kind.STR, tokens]],
    ['tokenizer.ggml.token_type', [Kind.ARR, Kind.I32, types]],
    ['tokenizer.ggml.merges', [Kind.ARR, Kind.STR, merges]],
    ['tokenizer.ggml.bos_token_id', [Kind.U32, 0]],
    ['tokenizer.ggml.eos_token_id', [Kind.U32, 1]],
    ['tokenizer.ggml.add_bos_token', [Kind.BOOL, true]],
    ['tokenizer.chat_template', [Kind.STR, TINY_CHAT_TEMPLATE]],
  ];
  const v = tokens.length;
  const tensors: [string, number[]][] = [
    ['token_embd.weight', [N_EMBD, v]],
    ['output_norm.weight', [N_EMBD]],
    ['output.weight', [N_EMBD, v]],
    ['blk.0.attn_norm.weight', [N_EMBD]],
    ['blk.0.attn_q.weight', [N_EMBD, N_EMBD]],
    ['blk.0.attn_k.weight', [N_EMBD, N_EMBD]],
    ['blk.0.attn_v.weight', [N_EMBD, N_EMBD]],
    ['blk.0.attn_output.weight', [N_EMBD, N_EMBD]],
    ['blk.0.ffn_norm.weight', [N_EMBD]],
    ['blk.0.ffn_gate.weight', [N_EMBD, N_FF]],
    ['blk.0.ffn_up.weight', [N_EMBD, N_FF]],
    ['blk.0.ffn_down.weight', [N_FF, N_EMBD]],
  ];
  const w = new Writer();
  w.bytes(Buffer.from('GGUF'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(metadata.length);
  for (const [key, value] of metadata) {
    w.str(key);
    w.value(value);
  }
  let seed = 12345;
  const random = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32 - 0.5;
  };
  const data: Buffer[] = [];
  let offset = 0;
  for (const [name, dims] of tensors) {
    const b = Buffer.alloc(dims.reduce((a, x) => a * x, 1) * 4);
    for (let i = 0; i < b.length; i += 4) b.writeFloatLE(name.includes('norm') ? 1 : random() * 0.2, i);
    w.str(name);
    w.u32(dims.length);
    for (const d of dims) w.u64(d);
    w.u32(0); // F32
    w.u64(offset);
    data.push(b, Buffer.alloc(pad(b.length)));
    offset += b.length + pad(b.length);
  }
  const header = w.done();
  writeFileSync(path, Buffer.concat([header, Buffer.alloc(pad(header.length)), ...data]));
}

function pad(n: number): number {
  return (ALIGN - (n % ALIGN)) % ALIGN;
}
