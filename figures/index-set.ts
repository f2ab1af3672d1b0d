// A set of request indices as one bit each: the collector's de-duplication memory per agent and
// class, so it grows by an eighth of a byte per request instead of a string key and a hash-set
// entry (tens of bytes) per request. Indices are small dense integers (a class's request_index).
//
// One agent's indices are striped: agent i of N owns the indices ≡ i (mod N) of each class, open
// and closed loop alike (shares.ts), worker threads included. Given the stride N, the set keeps
// the bit of floor(index / N) in one bitmap per residue mod N, so a 10,000-agent fleet costs each
// agent's set 1/N of the class's index range, not all of it (N × the memory otherwise: 1.25 MB
// per agent and class at 10M requests, 12.5 GB over 10,000 agents). Indices of several residues
// (a session's later turns, (turn − 1) · sessions + s) take a bitmap each, never more bits than
// one bitmap of the whole range.
export class IndexSet {
  /** One bitmap per residue mod stride, bit floor(index / stride); each starts small and doubles. */
  private readonly byResidue = new Map<number, Uint8Array>();
  private members = 0;

  /** `stride`: the step between one agent's indices (the fleet's agent count; 1 keeps one bitmap of every index). */
  constructor(private readonly stride = 1) {
    if (!Number.isInteger(stride) || stride < 1) throw new RangeError(`stride ${stride} is not a positive integer`);
  }

  /** Whether `i` is in the set. */
  has(i: number): boolean {
    const bits = this.byResidue.get(i % this.stride);
    const k = Math.floor(i / this.stride);
    const byte = k >>> 3;
    return bits !== undefined && byte < bits.length && (bits[byte]! & (1 << (k & 7))) !== 0;
  }

  /** Adds `i` (a non-negative integer); returns false when it was already there. */
  add(i: number): boolean {
    if (!Number.isInteger(i) || i < 0) throw new RangeError(`request index ${i} is not a non-negative integer`);
    const residue = i % this.stride;
    const k = Math.floor(i / this.stride);
    const byte = k >>> 3;
    let bits = this.byResidue.get(residue) ?? new Uint8Array(INITIAL_BYTES);
    if (byte >= bits.length) {
      let size = bits.length;
      while (size <= byte) size *= 2;
      const grown = new Uint8Array(size);
      grown.set(bits);
      bits = grown;
    }
    this.byResidue.set(residue, bits);
    const mask = 1 << (k & 7);
    if ((bits[byte]! & mask) !== 0) return false;
    bits[byte]! |= mask;
    this.members++;
    return true;
  }

  /** Removes `i`; returns false when it was not there. */
  delete(i: number): boolean {
    if (!this.has(i)) return false;
    const k = Math.floor(i / this.stride);
    this.byResidue.get(i % this.stride)![k >>> 3]! &= ~(1 << (k & 7));
    this.members--;
    return true;
  }

  /** How many indices the set holds. */
  get size(): number {
    return this.members;
  }

  /** Bytes the set's bitmaps hold. */
  get bytes(): number {
    let n = 0;
    for (const b of this.byResidue.values()) n += b.length;
    return n;
  }
}

/** A bitmap's first size: small, as a session class's later turns give an agent many residues. */
const INITIAL_BYTES = 16;
