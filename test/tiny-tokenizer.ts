// A small but real Hugging Face tokenizer, written by the test (no model hub here): byte-level BPE
// over all 256 bytes, with merges that make a space plus a word of up to three letters one token
// (longer words cost a token per letter), and a chat template with special tokens in
// tokenizer_config.json. It counts unlike engine-sim's one-token-per-word, which is the point.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// GPT-2's reversible byte → printable character map, which byte-level BPE vocabularies use.
function byteChars(): string[] {
  const keep: number[] = [];
  for (let b = 33; b <= 126; b++) keep.push(b);
  for (let b = 161; b <= 172; b++) keep.push(b);
  for (let b = 174; b <= 255; b++) keep.push(b);
  const out: string[] = [];
  let n = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCodePoint(keep.includes(b) ? b : 256 + n++);
  return out;
}

const SPECIAL = ['<s>', '</s>', '<|user|>', '<|end|>', '<|assistant|>'];
const SHORT_WORDS =
  'the of and to in is was for on are as be at by had not but or an we her she if so no can out up two may do any my now our man me did how too way'.split(
    ' ',
  );
/** Tokens the chat template adds around a user message: <s>, <|user|>, "\n" (Ċ), <|end|>, "\n", <|assistant|>, "\n". */
export const TINY_TEMPLATE_TOKENS = 7;

/** Tokens of `text` (no special tokens) under this tokenizer, computed independently of the library. */
export function tinyCount(text: string): number {
  // The pre-tokenizer splits " word" pieces. The merges only ever extend a leading space by letters
  // of a short word, so BPE leaves one token for the space and the longest such prefix, and one
  // per remaining byte.
  let n = 0;
  for (const piece of text.match(/ ?[A-Za-z]+| ?\d+| ?[^\sA-Za-z\d]+|\s+/g) ?? []) {
    let k = 0;
    if (piece.startsWith(' ')) while (k < piece.length - 1 && SHORT_WORDS.some((w) => w.startsWith(piece.slice(1, k + 2)))) k++;
    n += k > 0 ? 1 + (Buffer.byteLength(piece) - 1 - k) : Buffer.byteLength(piece);
  }
  return n;
}

/** Writes tokenizer.json and tokenizer_config.json into `dir`; returns the tokenizer.json path. */
export function writeTinyTokenizer(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const vocab: Record<string, number> = {};
  const add = (t: string): void => {
    if (!(t in vocab)) vocab[t] = Object.keys(vocab).length;
  };
  SPECIAL.forEach(add);
  byteChars().forEach(add);
  const merges: string[] = [];
  for (const w of SHORT_WORDS) {
    let acc = 'Ġ';
    for (const ch of w) {
      if (!merges.includes(`${acc} ${ch}`)) merges.push(`${acc} ${ch}`);
      acc += ch;
      add(acc);
    }
  }
  const added = SPECIAL.map((content) => ({
    id: vocab[content],
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [],
      special_tokens: { '<s>': { id: '<s>', ids: [0], tokens: ['<s>'] } },
    },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges,
    },
  };
  const config = {
    bos_token: '<s>',
    eos_token: '</s>',
    chat_template:
      "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}",
  };
  const path = join(dir, 'tokenizer.json');
  writeFileSync(path, JSON.stringify(tokenizer));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(config));
  return path;
}
