// A set of request indices as one bit each: the collector's de-duplication memory per agent and
// class, so it grows by an eighth of a byte per request instead of a string key and a hash-set
// entry (tens of bytes) per request. Indices are small dense integers (a class's request_index).
export class IndexSet {
  private bits = new Uint8Array(1024);
  private members = 0;

  /** Whether `i` is in the set. */
  has(i: number): boolean {
    const byte = i >>> 3;
    return byte < this.bits.length && (this.bits[byte]! & (1 << (i & 7))) !== 0;
  }

  /** Adds `i` (a non-negative integer); returns false when it was already there. */
  add(i: number): boolean {
    if (!Number.isInteger(i) || i < 0) throw new RangeError(`request index ${i} is not a non-negative integer`);
    const byte = i >>> 3;
    if (byte >= this.bits.length) {
      let size = this.bits.length;
      while (size <= byte) size *= 2;
      const grown = new Uint8Array(size);
      grown.set(this.bits);
      this.bits = grown;
    }
    const mask = 1 << (i & 7);
    if ((this.bits[byte]! & mask) !== 0) return false;
    this.bits[byte]! |= mask;
    this.members++;
    return true;
  }

  /** Removes `i`; returns false when it was not there. */
  delete(i: number): boolean {
    if (!this.has(i)) return false;
    this.bits[i >>> 3]! &= ~(1 << (i & 7));
    this.members--;
    return true;
  }

  /** How many indices the set holds. */
  get size(): number {
    return this.members;
  }

  /** Bytes the set holds. */
  get bytes(): number {
    return this.bits.length;
  }
}
