// Synthetic traces and datasets shaped like the public ones (domain.md §10), for examples and tests:
// we ship generated excerpts, never downloaded corpora. Rows draw from a few shared "system
// prompt" prefixes and continue earlier conversations, so their Mooncake hash ids share leading
// blocks the way production rows do.
import type { Rng } from '../shared/rng.js';
import { rngFromKey } from '../shared/rng.js';

/** One Mooncake row. */
export interface MooncakeRow {
  timestamp: number;
  input_length: number;
  output_length: number;
  hash_ids: number[];
}

/** Knobs of the synthetic trace. */
export interface SynthOptions {
  rows: number;
  seed: number;
  /** Mean arrivals per second (Poisson; timestamps are integer ms). */
  ratePerS: number;
  /** Tokens per hash id. */
  blockTokens?: number;
  /** Output lengths are uniform in [min, max]. */
  outputTokens?: [number, number];
}

const int = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng.next() * (hi - lo + 1));

/** A Mooncake-format trace: 6 shared prefixes of 1–3 blocks, a third of rows continuing an earlier row. */
export function synthMooncake(o: SynthOptions): MooncakeRow[] {
  const rng = rngFromKey(`trace-synth:${o.seed}`);
  const block = o.blockTokens ?? 512;
  const [outLo, outHi] = o.outputTokens ?? [8, 64];
  let nextId = 0;
  const groups = Array.from({ length: 6 }, () => Array.from({ length: int(rng, 1, 3) }, () => nextId++));
  const rows: MooncakeRow[] = [];
  let tMs = 0;
  for (let i = 0; i < o.rows; i++) {
    tMs += rng.exponential(o.ratePerS) * 1000;
    const earlier = rows.filter((r) => r.hash_ids.length > 1);
    let ids: number[];
    if (earlier.length > 0 && rng.next() < 1 / 3) {
      // A follow-up turn: the earlier row's full blocks (its partial last block differs once extended), then new ones.
      const prev = earlier[Math.floor(rng.next() * earlier.length)]!;
      ids = [...prev.hash_ids.slice(0, -1), ...Array.from({ length: int(rng, 1, 2) }, () => nextId++)];
    } else {
      // Popular prefixes first: group g is drawn with weight 1/(g+1).
      const weights = groups.map((_, g) => 1 / (g + 1));
      const u = rng.next() * weights.reduce((s, w) => s + w, 0);
      let g = 0;
      let acc = weights[0]!;
      while (acc <= u && g < weights.length - 1) acc += weights[++g]!;
      ids = [...groups[g]!, ...Array.from({ length: int(rng, 1, 2) }, () => nextId++)];
    }
    const inputLength = (ids.length - 1) * block + int(rng, 1, block);
    rows.push({ timestamp: Math.round(tMs), input_length: inputLength, output_length: int(rng, outLo, outHi), hash_ids: ids });
  }
  return rows;
}

/** The rows as Mooncake JSONL. */
export function mooncakeJsonl(rows: readonly MooncakeRow[]): string {
  return `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
}

/** The rows as an Azure LLM inference CSV (TIMESTAMP as a UTC date-time with 7 fractional digits). */
export function azureCsv(rows: readonly MooncakeRow[], originIso = '2023-11-16T18:00:00Z'): string {
  const origin = Date.parse(originIso);
  const lines = rows.map((r) => {
    const iso = new Date(origin + r.timestamp).toISOString(); // 2023-11-16T18:00:00.123Z
    return `${iso.slice(0, 10)} ${iso.slice(11, 23)}0000,${r.input_length},${r.output_length}`;
  });
  return `${['TIMESTAMP,ContextTokens,GeneratedTokens', ...lines].join('\n')}\n`;
}

/** The rows as a BurstGPT CSV (Timestamp in seconds); every `failEvery`-th row a failure (0 response tokens). */
export function burstGptCsv(rows: readonly MooncakeRow[], failEvery = 20): string {
  const lines = rows.map((r, i) => {
    const out = (i + 1) % failEvery === 0 ? 0 : r.output_length;
    return `${(r.timestamp / 1000).toFixed(3)},ChatGPT,${r.input_length},${out},${r.input_length + out},Conversation log`;
  });
  return `${['Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type', ...lines].join('\n')}\n`;
}

const WORDS =
  'how what why when explain write summarise compare list the a of to in for with on data model cache token server request latency queue batch prompt user system reply'.split(
    ' ',
  );

function sentence(rng: Rng, words: number): string {
  return Array.from({ length: words }, () => WORDS[Math.floor(rng.next() * WORDS.length)]).join(' ');
}

/** A JSONL prompt dataset: plain prompts and chat conversations, some with output_tokens. */
export function synthPromptsJsonl(records: number, seed: number): string {
  const rng = rngFromKey(`dataset-synth:${seed}`);
  const lines: string[] = [];
  for (let i = 0; i < records; i++) {
    const out = i % 3 === 0 ? {} : { output_tokens: int(rng, 16, 128) };
    if (i % 4 === 3) {
      const messages = [
        { role: 'system', content: sentence(rng, int(rng, 8, 24)) },
        { role: 'user', content: sentence(rng, int(rng, 16, 256)) },
      ];
      lines.push(JSON.stringify({ messages, ...out }));
    } else lines.push(JSON.stringify({ prompt: sentence(rng, int(rng, 16, 256)), ...out }));
  }
  return `${lines.join('\n')}\n`;
}

/** A ShareGPT-style file: conversations of human/gpt turns (one without a human turn, as real files have). */
export function synthShareGpt(conversations: number, seed: number): string {
  const rng = rngFromKey(`sharegpt-synth:${seed}`);
  const out = Array.from({ length: conversations }, (_, i) => ({
    id: `synth-${i}`,
    conversations:
      i === 5
        ? [{ from: 'gpt', value: sentence(rng, 12) }]
        : Array.from({ length: 2 * int(rng, 1, 3) }, (_, t) => ({
            from: t % 2 === 0 ? 'human' : 'gpt',
            value: sentence(rng, int(rng, 8, t % 2 === 0 ? 120 : 160)),
          })),
  }));
  return `${JSON.stringify(out, null, 1)}\n`;
}
