import { describe, expect, it } from 'vitest';
import { csvRows, num, parseCsv } from './csv.js';

describe('csv reader', () => {
  it('reads quoted fields with commas, doubled quotes and newlines', () => {
    const text = 'a,b,c\r\n1,"{""x"":""y,z""}","two\nlines"\n2,,\n';
    expect(csvRows(text)).toEqual([
      ['a', 'b', 'c'],
      ['1', '{"x":"y,z"}', 'two\nlines'],
      ['2', '', ''],
    ]);
    expect(parseCsv(text)).toEqual([
      { a: '1', b: '{"x":"y,z"}', c: 'two\nlines' },
      { a: '2', b: '', c: '' },
    ]);
  });

  it('reads a last line without a newline and ignores blank lines', () => {
    expect(parseCsv('h\n\n5')).toEqual([{ h: '5' }]);
  });

  it('numbers: empty and garbage cells are null', () => {
    expect(num('1.5')).toBe(1.5);
    expect(num('')).toBeNull();
    expect(num('NaN')).toBeNull();
    expect(num(undefined)).toBeNull();
  });
});
