// A request's inter-token gaps (ns) in a Float64Array taken from a pool: at thousands of chunks
// per second a growing JS array per request is garbage the GC keeps collecting, and a fresh typed
// array above 64 bytes allocates outside the V8 heap. Arrays go back to the pool once the
// recorder and the spool have read them.

// 8 gaps are 64 bytes, which V8 keeps on its heap (no ArrayBuffer and backing store per open
// stream); longer streams grow it, and the pool hands grown arrays to later requests.
const FIRST_CAPACITY = 8;
/** Free arrays kept (enough for every stream of a busy agent to finish at once). */
const POOL_MAX = 2048;
const pool: Float64Array[] = [];

/** The ITL gaps of one request. */
export class GapList {
  private values: Float64Array | null = null;
  length = 0;

  push(gapNs: number): void {
    let v = this.values;
    if (v === null) v = this.values = pool.pop() ?? new Float64Array(FIRST_CAPACITY);
    else if (this.length === v.length) {
      const grown = new Float64Array(v.length * 2);
      grown.set(v);
      release(v);
      v = this.values = grown;
    }
    v[this.length++] = gapNs;
  }

  /** The gaps recorded so far (a view: valid until `release`). */
  view(): Float64Array {
    return this.values === null ? EMPTY : this.values.subarray(0, this.length);
  }

  /** Returns the array to the pool; the list is empty afterwards. */
  release(): void {
    if (this.values !== null) release(this.values);
    this.values = null;
    this.length = 0;
  }
}

const EMPTY = new Float64Array(0);

function release(v: Float64Array): void {
  if (pool.length < POOL_MAX) pool.push(v);
}
