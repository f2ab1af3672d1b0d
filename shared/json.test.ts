import { describe, expect, it } from 'vitest';
import { parseExact, stringifyExact } from './json.js';

describe('exact JSON', () => {
  it('writes ns epoch bigints as exact integer literals and reads them back', () => {
    const v = { t: 1791200544279383717n, s: 'id 12345678901234567890', n: 1.5, list: [1791200544279383701n] };
    const text = stringifyExact(v);
    expect(text).toBe('{"t":1791200544279383717,"s":"id 12345678901234567890","n":1.5,"list":[1791200544279383701]}');
    expect(parseExact(text)).toEqual(v);
  });
  it('reads full-precision fractions as numbers, not as big integers', () => {
    const v = { rate: 1 / 3, share: 103 / 104, tiny: 1 / 7 / 1e6, big: -1791200544279383717n };
    expect(parseExact(stringifyExact(v, 2))).toEqual(v);
  });
  it('shows why: a double cannot hold the value', () => {
    expect(BigInt(JSON.parse('1791200544279383717') as number)).not.toBe(1791200544279383717n);
  });
});
