import { describe, expect, it } from 'vitest';
import { searchWords } from './search.js';

// A tokenizer model: a chat template of `template` tokens, a head of `head` tokens, and every
// `every`-th filler word taking two tokens.
function tokenizer(template: number, head: number, every = 0) {
  const calls: [number, number][] = [];
  const extra = (n: number) => (every > 0 ? Math.floor(n / every) : 0);
  const count = async (prefixWords: number, words: number) => {
    calls.push([prefixWords, words]);
    return template + head + prefixWords + extra(prefixWords) + words + extra(words);
  };
  return { count, calls };
}

describe('searchWords', () => {
  it('is exact in one count where a word is a token (engine-sim)', async () => {
    const t = tokenizer(0, 1);
    expect(await searchWords(4096, 0, t.count)).toEqual({ prefixWords: 0, words: 4095, counted: 4096, attempts: 1 });
  });

  it('takes off the chat template and a 5-token head in a second count', async () => {
    const t = tokenizer(11, 5);
    const r = await searchWords(64, 0, t.count);
    expect(r).toMatchObject({ counted: 64, words: 48, attempts: 2 });
  });

  it('gets within a token when some words take two, and stops before MAX_COUNTS', async () => {
    const t = tokenizer(20, 4, 7);
    const r = await searchWords(20000, 0, t.count);
    expect(Math.abs(r.counted - 20000)).toBeLessThanOrEqual(1);
    expect(r.attempts).toBeLessThanOrEqual(8);
  });

  it('sizes a shared prefix by the measured tokens per word', async () => {
    const t = tokenizer(0, 1, 2); // 1.5 tokens per word
    const r = await searchWords(3000, 1500, t.count);
    expect(r.prefixWords).toBe(1000);
    expect(Math.abs(r.counted - 3000)).toBeLessThanOrEqual(1);
  });

  it('cannot go below no filler at all: the best it found, with the count', async () => {
    const t = tokenizer(30, 4);
    const r = await searchWords(16, 0, t.count);
    expect(r).toMatchObject({ words: 0, counted: 34 });
  });
});
