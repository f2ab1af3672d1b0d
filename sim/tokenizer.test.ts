import { describe, expect, it } from 'vitest';
import { countTokens, fnv1a32, tokenIds, words } from './tokenizer.js';

describe('tokenizer', () => {
  it('counts whitespace-separated words', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens(' \n\t ')).toBe(0);
    expect(countTokens('one')).toBe(1);
    expect(countTokens('  one two\tthree\nfour  ')).toBe(4);
    expect(words('a  b')).toEqual(['a', 'b']);
  });

  it('gives each word a stable FNV-1a id', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
    expect(tokenIds('a foobar a')).toEqual([0xe40c292c, 0xbf9cf968, 0xe40c292c]);
  });
});
