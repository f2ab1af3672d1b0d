import { describe, expect, it } from 'vitest';
import { ClassImages } from './images.js';
import { encodeBlockJpeg } from './jpeg.js';

// The markers of a JPEG in order, up to the scan, and the scan's bytes.
function parse(jpeg: Buffer): { markers: number[]; sof: Buffer; scan: Buffer } {
  const markers: number[] = [];
  let i = 2;
  let sof: Buffer = Buffer.alloc(0);
  while (i < jpeg.length) {
    expect(jpeg[i]).toBe(0xff);
    const marker = jpeg[i + 1]!;
    markers.push(marker);
    const length = jpeg.readUInt16BE(i + 2);
    if (marker === 0xc0) sof = jpeg.subarray(i + 4, i + 2 + length);
    i += 2 + length;
    if (marker === 0xda) break;
  }
  return { markers, sof, scan: jpeg.subarray(i, jpeg.length - 2) };
}

describe('the baseline JPEG encoder', () => {
  it('writes SOI, JFIF, DQT, SOF0 of the stated size, DHT, SOS, a stuffed scan and EOI', () => {
    const jpeg = encodeBlockJpeg(1001, 77, (i) => (i * 97) & 255);
    expect([...jpeg.subarray(0, 2)]).toEqual([0xff, 0xd8]);
    expect([...jpeg.subarray(-2)]).toEqual([0xff, 0xd9]);
    const { markers, sof, scan } = parse(jpeg);
    expect(markers).toEqual([0xe0, 0xdb, 0xc0, 0xc4, 0xc4, 0xda]);
    expect({ bits: sof[0], height: sof.readUInt16BE(1), width: sof.readUInt16BE(3), components: sof[5] }).toEqual({
      bits: 8,
      height: 77,
      width: 1001,
      components: 1,
    });
    // Inside the scan every 0xFF is followed by a stuffed zero, never a marker.
    for (let i = 0; i < scan.length; i++) if (scan[i] === 0xff) expect(scan[++i]).toBe(0);
  });

  it('is deterministic and differs per request', () => {
    const images = new ClassImages(7, 'c', { count: 2, width: 64, height: 48, format: 'jpeg' });
    expect(images.jpeg(3, 0).equals(images.jpeg(3, 0))).toBe(true);
    expect(images.jpeg(3, 0).equals(images.jpeg(4, 0))).toBe(false);
    expect(images.jpeg(3, 0).equals(images.jpeg(3, 1))).toBe(false);
    expect(images.dataUris(3)[0]).toMatch(/^data:image\/jpeg;base64,\/9j\//);
  });
});
