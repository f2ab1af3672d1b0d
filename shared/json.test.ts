import { readFileSync } from 'node:fs';
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

  it('reads ordinary floats of 16 or more digits as the doubles JSON.parse gives', () => {
    // What a gateway's pool saturation, a KV-cache share or a summed rate look like unrounded.
    const floats = [
      0.1 + 0.2,
      1.0940000000000001,
      0.44399999999999995,
      123456.78901234567,
      -2.2250738585072014e-308,
      1.7976931348623157e308,
      5e-324,
      1e21,
      -0.30000000000000004,
    ];
    const text = stringifyExact({ server: { max_pool_saturation: floats[1], values: floats }, started_at_unix_ns: 1791200544279383700n });
    expect(text).toContain('0.30000000000000004');
    const back = parseExact<{ server: { max_pool_saturation: number; values: number[] }; started_at_unix_ns: bigint }>(text);
    expect(back.server.values).toEqual(floats);
    expect(back.server.max_pool_saturation).toBe(1.0940000000000001);
    expect(back.started_at_unix_ns).toBe(1791200544279383700n);
  });

  it('keeps 15-digit integers as numbers, 16-digit ones (either sign) as bigint, and strings as they are', () => {
    expect(parseExact('[999999999999999, 1000000000000000, -1000000000000000, "0.30000000000000004", "1791200544279383717"]')).toEqual([
      999999999999999,
      1000000000000000n,
      -1000000000000000n,
      '0.30000000000000004',
      '1791200544279383717',
    ]);
  });

  it('reads the single-client seed, float metrics and the ns timestamp above 2^53 alike', () => {
    const seed = parseExact<Record<string, any>>(
      readFileSync(new URL('../test/fixtures/single-client-benchmark.json', import.meta.url), 'utf8'),
    );
    expect(seed.started_at_unix_ns).toBe(1791200544279383700n);
    expect(seed.metrics.completion_tokens_mean_ci95_high).toBe(462.3140563310079);
  });

  it('refuses text that is not JSON', () => {
    expect(() => parseExact('{"a": 0.}')).toThrow();
    expect(() => parseExact('{"a": 1,}')).toThrow();
  });
});
