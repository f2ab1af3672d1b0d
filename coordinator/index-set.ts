// A set of request indices as one bit each: the collector's de-duplication memory per agent and
// class, so it grows by an eighth of a byte per request instead of a string key and a hash-set
// entry (tens of bytes) per request. Indices are small dense integers (a class's request_index).
//
// One agent's indices are striped: agent i of N owns the indices ≡ i (mod N) of each class, open
// and closed loop alike (shares.ts), worker threads included. Given the stride N, the set keeps
// the bit of floor(index / N) for the residue it saw first, so a 10,000-agent fleet costs each
// agent's set 1/N of the class's index range, not all of it (N × the memory otherwise: 1.25 MB
// per agent and class at 10M requests, 12.5 GB over 10,000 agents). An index of another residue
// (never sent by a real agent) is kept exactly too, in a hash set beside the bits.
export class IndexSet {
  private bits = new Uint8Array(1024);
  private members = 0;
  /** The residue mod stride whose indices are kept as bits (the first index's). */
  private residue = -1;
  /** Indices of any other residue. */
  private readonly others = new Set<number>();

  /** `stride`: the step between one agent's indices (the fleet's agent count; 1 keeps every index as a bit). */
  constructor(private readonly stride = 1) {
    if (!Number.isInteger(stride) || stride < 1) throw new RangeError(`stride ${stride} is not a positive integer`);
  }

  /** Whether `i` is in the set. */
  has(i: number): boolean {
    if (!this.striped(i)) return this.others.has(i);
    const k = Math.floor(i / this.stride);
    const byte = k >>> 3;
    return byte < this.bits.length && (this.bits[byte]! & (1 << (k & 7))) !== 0;
  }

  /** Adds `i` (a non-negative integer); returns false when it was already there. */
  add(i: number): boolean {
    if (!Number.isInteger(i) || i < 0) throw new RangeError(`request index ${i} is not a non-negative integer`);
    if (this.residue < 0) this.residue = i % this.stride;
    if (!this.striped(i)) {
      if (this.others.has(i)) return false;
      this.others.add(i);
      this.members++;
      return true;
    }
    const k = Math.floor(i / this.stride);
    const byte = k >>> 3;
    if (byte >= this.bits.length) {
      let size = this.bits.length;
      while (size <= byte) size *= 2;
      const grown = new Uint8Array(size);
      grown.set(this.bits);
      this.bits = grown;
    }
    const mask = 1 << (k & 7);
    if ((this.bits[byte]! & mask) !== 0) return false;
    this.bits[byte]! |= mask;
    this.members++;
    return true;
  }

  /** Removes `i`; returns false when it was not there. */
  delete(i: number): boolean {
    if (!this.has(i)) return false;
    if (this.striped(i)) {
      const k = Math.floor(i / this.stride);
      this.bits[k >>> 3]! &= ~(1 << (k & 7));
    } else this.others.delete(i);
    this.members--;
    return true;
  }

  /** How many indices the set holds. */
  get size(): number {
    return this.members;
  }

  /** Bytes the set holds (its bits; the other residues' hash set is not counted). */
  get bytes(): number {
    return this.bits.length;
  }

  // Whether i is of the residue kept as bits (before the first add, none is).
  private striped(i: number): boolean {
    return this.residue >= 0 && i % this.stride === this.residue;
  }
}
