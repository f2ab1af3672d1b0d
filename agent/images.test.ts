import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ClassImages } from './images.js';

// The pixels of a PNG made here, decoded with zlib (checks the zlib stream and its Adler-32).
function pixels(png: Buffer): { width: number; height: number; raw: Buffer } {
  expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const idatLength = png.readUInt32BE(33);
  expect(png.subarray(37, 41).toString('latin1')).toBe('IDAT');
  return { width, height, raw: inflateSync(png.subarray(41, 41 + idatLength)) };
}

describe('deterministic PNG images', () => {
  it('are valid PNGs of the stated size, the same for the same request, different for another', () => {
    const images = new ClassImages(3, 'vis', { count: 2, width: 40, height: 30 });
    const a = images.png(7, 0);
    const { width, height, raw } = pixels(a);
    expect([width, height, raw.length]).toEqual([40, 30, 41 * 30]);
    expect(new ClassImages(3, 'vis', { count: 2, width: 40, height: 30 }).png(7, 0).equals(a)).toBe(true);
    expect(pixels(images.png(8, 0)).raw.equals(raw)).toBe(false);
    expect(pixels(images.png(7, 1)).raw.equals(raw)).toBe(false);
    expect(images.dataUris(7)[0]).toBe(`data:image/png;base64,${a.toString('base64')}`);
    const shared = new ClassImages(3, 'vis', { count: 1, width: 8, height: 8, shared: true });
    expect(shared.dataUris(1)).toEqual(shared.dataUris(2));
  });
});
