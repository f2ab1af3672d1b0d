// A minimal baseline JPEG encoder for prompt.images (format "jpeg"): real 8-bit grayscale JFIF
// bytes of any width × height, one component, whose every 8×8 block is one flat gray level (its
// DC coefficient; all AC coefficients are zero, coded as end-of-block). That is a valid baseline
// (SOF0, Huffman) image any decoder reads — a mosaic rather than a photo — and cheap enough to
// make per request: one DC code and one EOB per block. The quantization table is all ones, so a
// block's DC coefficient is 8 × (level − 128), and the DC table is the standard luminance one.

// Standard luminance DC Huffman table (JPEG Annex K.3): code lengths 1..16 and the categories.
const DC_BITS = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0];
const DC_VALUES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
// The AC table holds only end-of-block (symbol 0x00) as the one-bit code "0".
const AC_BITS = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
const AC_VALUES = [0];

/** Canonical Huffman codes (Annex C) of a table: code and length by symbol. */
function huffmanCodes(bits: readonly number[], values: readonly number[]): Map<number, { code: number; length: number }> {
  const codes = new Map<number, { code: number; length: number }>();
  let code = 0;
  let k = 0;
  for (let length = 1; length <= 16; length++) {
    for (let i = 0; i < bits[length - 1]!; i++) codes.set(values[k++]!, { code: code++, length });
    code <<= 1;
  }
  return codes;
}

const DC_CODES = huffmanCodes(DC_BITS, DC_VALUES);

/** Writes bits most significant first, stuffing a zero byte after every 0xFF (F.1.2.3). */
class BitWriter {
  private readonly bytes: number[] = [];
  private acc = 0;
  private n = 0;

  write(value: number, length: number): void {
    for (let i = length - 1; i >= 0; i--) {
      this.acc = (this.acc << 1) | ((value >>> i) & 1);
      if (++this.n === 8) this.flushByte();
    }
  }

  /** Pads the last byte with one bits, as the standard asks. */
  finish(): Buffer {
    while (this.n !== 0) this.write(1, 1);
    return Buffer.from(this.bytes);
  }

  private flushByte(): void {
    this.bytes.push(this.acc);
    if (this.acc === 0xff) this.bytes.push(0);
    this.acc = 0;
    this.n = 0;
  }
}

function segment(marker: number, body: readonly number[] | Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(0xff00 | marker, 0);
  head.writeUInt16BE(body.length + 2, 2);
  return Buffer.concat([head, Buffer.from(body)]);
}

function huffmanTable(tableClass: number, bits: readonly number[], values: readonly number[]): Buffer {
  return segment(0xc4, [(tableClass << 4) | 0, ...bits, ...values]);
}

const JFIF = segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
const DQT = segment(0xdb, [0, ...new Array<number>(64).fill(1)]);
const DHT = Buffer.concat([huffmanTable(0, DC_BITS, DC_VALUES), huffmanTable(1, AC_BITS, AC_VALUES)]);
const SOS = segment(0xda, [1, 1, 0x00, 0, 63, 0]);

/**
 * A baseline grayscale JPEG of width × height whose block (bx, by), in raster order over the
 * ceil(width/8) × ceil(height/8) blocks, has gray level `level(i)` (0–255) for block index i.
 */
export function encodeBlockJpeg(width: number, height: number, level: (block: number) => number): Buffer {
  if (width < 1 || height < 1 || width > 65535 || height > 65535)
    throw new Error(`a JPEG is 1–65535 pixels a side, not ${width}×${height}`);
  const sof = Buffer.from([8, height >> 8, height & 255, width >> 8, width & 255, 1, 1, 0x11, 0]);
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  const bits = new BitWriter();
  let previous = 0;
  for (let i = 0; i < blocks; i++) {
    const dc = 8 * ((level(i) & 255) - 128);
    const diff = dc - previous;
    previous = dc;
    const magnitude = Math.abs(diff);
    const category = magnitude === 0 ? 0 : 32 - Math.clz32(magnitude);
    const { code, length } = DC_CODES.get(category)!;
    bits.write(code, length);
    // A negative difference is sent as its one's complement in `category` bits (F.1.2.1).
    if (category > 0) bits.write(diff > 0 ? diff : diff + (1 << category) - 1, category);
    bits.write(0, 1); // end of block: every AC coefficient is zero
  }
  return Buffer.concat([Buffer.from([0xff, 0xd8]), JFIF, DQT, segment(0xc0, sof), DHT, SOS, bits.finish(), Buffer.from([0xff, 0xd9])]);
}
