// Deterministic images for prompt.images (JPEG: jpeg.ts, one seeded gray level per 8×8 block). PNG: real 8-bit grayscale PNG bytes of the stated size,
// unique per request (unless the class shares them), cheap enough to make at send time. The pixels
// below the first row are a seeded pattern computed and compressed once per class (it compresses
// about 9:1, like a synthetic image rather than a photo); the first row is seeded noise from the
// request, written as a stored deflate block in front of the cached compressed rest, with the
// zlib checksum combined rather than recomputed. So each request's pixels differ (a server's
// image cache cannot answer one request from another) for the cost of one row and a CRC.
import { crc32, deflateRawSync } from 'node:zlib';
import { rngFromKey } from '../shared/rng.js';
import { encodeBlockJpeg } from './jpeg.js';

/** The images of one class: `count` PNGs of width × height per request. */
export class ClassImages {
  private readonly rest: Buffer;
  private readonly restAdler: number;
  private readonly restLength: number;
  private readonly ihdr: Buffer;
  private shared: string[] | undefined;

  constructor(
    private readonly seed: number,
    private readonly className: string,
    private readonly spec: { count: number; width: number; height: number; shared?: boolean; format?: 'png' | 'jpeg' },
  ) {
    const { width, height } = spec;
    const rng = rngFromKey(`${seed}:${className}:images`);
    const offset = Math.floor(rng.next() * 256);
    const raw = Buffer.alloc((width + 1) * (height - 1));
    for (let y = 1; y < height; y++) {
      const row = (y - 1) * (width + 1);
      for (let x = 0; x < width; x++) raw[row + 1 + x] = ((x ^ y) + offset) & 255; // filter byte 0 = none
    }
    this.rest = deflateRawSync(raw, { level: 6 });
    this.restAdler = adler32(raw);
    this.restLength = raw.length;
    this.ihdr = Buffer.alloc(13);
    this.ihdr.writeUInt32BE(width, 0);
    this.ihdr.writeUInt32BE(height, 4);
    this.ihdr.set([8, 0, 0, 0, 0], 8); // 8-bit grayscale, deflate, no filter method extras, no interlace
  }

  /** The data URIs of request `requestIndex`'s images. */
  dataUris(requestIndex: number): string[] {
    if (this.spec.shared) {
      this.shared ??= Array.from({ length: this.spec.count }, (_, k) => this.uri(0, k));
      return this.shared;
    }
    return Array.from({ length: this.spec.count }, (_, k) => this.uri(requestIndex, k));
  }

  private uri(requestIndex: number, k: number): string {
    if (this.spec.format === 'jpeg') return `data:image/jpeg;base64,${this.jpeg(requestIndex, k).toString('base64')}`;
    return `data:image/png;base64,${this.png(requestIndex, k).toString('base64')}`;
  }

  /** One image's JPEG bytes (format "jpeg"): every 8×8 block a gray level seeded by the request. */
  jpeg(requestIndex: number, k: number): Buffer {
    const rng = rngFromKey(`${this.seed}:${this.className}:image:${requestIndex}:${k}`);
    return encodeBlockJpeg(this.spec.width, this.spec.height, () => Math.floor(rng.next() * 256));
  }

  /** One image's PNG bytes. */
  png(requestIndex: number, k: number): Buffer {
    const width = this.spec.width;
    const rng = rngFromKey(`${this.seed}:${this.className}:image:${requestIndex}:${k}`);
    const first = Buffer.alloc(width + 1);
    for (let x = 1; x <= width; x++) first[x] = Math.floor(rng.next() * 256);
    // zlib header, one stored (not final) block holding the first row, the cached rest, Adler-32.
    const stored = Buffer.alloc(5);
    stored[0] = 0;
    stored.writeUInt16LE(first.length, 1);
    stored.writeUInt16LE(~first.length & 0xffff, 3);
    const adler = Buffer.alloc(4);
    adler.writeUInt32BE(adler32Combine(adler32(first), this.restAdler, this.restLength));
    const idat = Buffer.concat([Buffer.from([0x78, 0x01]), stored, first, this.rest, adler]);
    return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', this.ihdr), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
  }
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(data, crc32(head.subarray(4))));
  return Buffer.concat([head, data, crc]);
}

const BASE = 65521;

function adler32(data: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < data.length; ) {
    const end = Math.min(data.length, i + 3800); // keeps b below 2^31 before the modulo
    for (; i < end; i++) {
      a += data[i]!;
      b += a;
    }
    a %= BASE;
    b %= BASE;
  }
  return ((b << 16) | a) >>> 0;
}

// zlib's adler32_combine: the checksum of A‖B from those of A and B and B's length.
function adler32Combine(a1: number, a2: number, len2: number): number {
  const rem = len2 % BASE;
  let sum1 = a1 & 0xffff;
  let sum2 = (rem * sum1) % BASE;
  sum1 += (a2 & 0xffff) + BASE - 1;
  sum2 += ((a1 >>> 16) & 0xffff) + ((a2 >>> 16) & 0xffff) + BASE - rem;
  if (sum1 >= BASE) sum1 -= BASE;
  if (sum1 >= BASE) sum1 -= BASE;
  if (sum2 >= BASE << 1) sum2 -= BASE << 1;
  if (sum2 >= BASE) sum2 -= BASE;
  return ((sum2 << 16) | sum1) >>> 0;
}
