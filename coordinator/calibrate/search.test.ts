import { describe, expect, it } from 'vitest';
import { searchWords } from './search.js';

// A tokenizer model: a chat template of `template` tokens, a head of `head` tokens, every
// `every`-th filler word taking `long` tokens, and pad words one token each.
function tokenizer(template: number, head: number, every = 0, long = 2) {
  const calls: [number, number, number][] = [];
  const extra = (n: number) => (every > 0 ? Math.floor(n / every) * (long - 1) : 0);
  const count = async (prefixWords: number, words: number, pad: number) => {
    calls.push([prefixWords, words, pad]);
    return template + head + prefixWords + extra(prefixWords) + words + extra(words) + pad;
  };
  return { count, calls };
}

describe('searchWords', () => {
  it('is exact in one count where a word is a token (engine-sim)', async () => {
    const t = tokenizer(0, 1);
    expect(await searchWords(4096, 0, t.count)).toEqual({ prefixWords: 0, words: 4095, padWords: 0, counted: 4096, attempts: 1 });
  });

  it('takes off the chat template and a 5-token head in a second count', async () => {
    const t = tokenizer(11, 5);
    expect(await searchWords(64, 0, t.count)).toMatchObject({ counted: 64, words: 48, padWords: 0, attempts: 2 });
  });

  it('lands exactly with pad words where long words make the count jump past the target', async () => {
    const t = tokenizer(20, 4, 1, 2); // every word two tokens: words alone only ever count even
    const r = await searchWords(20001, 0, t.count);
    expect(r).toMatchObject({ counted: 20001, padWords: 1 });
    expect(r.attempts).toBeLessThanOrEqual(10);
    expect(await t.count(r.prefixWords, r.words, r.padWords)).toBe(20001);
  });

  it('sizes a shared prefix by the measured tokens per word', async () => {
    const t = tokenizer(0, 1, 2); // 1.5 tokens per word
    const r = await searchWords(3000, 1500, t.count);
    expect(r.prefixWords).toBe(1000);
    expect(r.counted).toBe(3000);
  });

  it('cannot go below no filler at all: the best it found, with the count', async () => {
    const t = tokenizer(30, 4);
    expect(await searchWords(16, 0, t.count)).toMatchObject({ words: 0, padWords: 0, counted: 34 });
  });
});
