// The KV cache of one replica: a pool of 16-token blocks. Without prefix caching it is a counter;
// with it, full prompt blocks are named by a chained content hash, stay cached after their request
// leaves (evictable, least recently freed first) and are shared by any later prompt with the same
// prefix — the way vLLM's block pool works.

/** Tokens per KV block, as in vLLM. */
export const BLOCK_SIZE = 16;

/** One block of the pool. */
export interface KvBlock {
  /** Content hash once the block holds a full, computed prompt block. */
  hash: number | undefined;
  /** Requests holding the block. */
  refs: number;
}

/** One request's share of the cache. */
export interface KvHolder {
  /** Blocks held (shared ones included). */
  blockCount: number;
  /** The blocks themselves, in token order (prefix caching only). */
  blocks: KvBlock[];
  /** Leading blocks already registered under their hash. */
  committedBlocks: number;
}

/** A holder with nothing allocated. */
export function emptyHolder(): KvHolder {
  return { blockCount: 0, blocks: [], committedBlocks: 0 };
}

/** Chained hashes of every full BLOCK_SIZE block of `tokenIds` (two FNV lanes give 53 bits). */
export function blockHashes(tokenIds: readonly number[]): number[] {
  const out: number[] = [];
  let a = 0x811c9dc5;
  let b = 0x1b873593;
  for (let end = BLOCK_SIZE; end <= tokenIds.length; end += BLOCK_SIZE) {
    for (let i = end - BLOCK_SIZE; i < end; i++) {
      a = Math.imul(a ^ tokenIds[i]!, 0x01000193) >>> 0;
      b = Math.imul(b ^ (tokenIds[i]! + i), 0x5bd1e995) >>> 0;
    }
    out.push(a * 0x200000 + (b & 0x1fffff));
  }
  return out;
}

/** The block pool of one replica. */
export class KvCache {
  /** Blocks in the pool. */
  readonly totalBlocks: number;
  // Blocks held by at least one request.
  private used = 0;
  private readonly cached = new Map<number, KvBlock>();
  // Cached blocks nobody holds, oldest first: reused last, evicted first.
  private readonly evictable = new Map<number, KvBlock>();

  constructor(
    capacityTokens: number,
    readonly prefixCaching: boolean,
  ) {
    this.totalBlocks = Math.floor(capacityTokens / BLOCK_SIZE);
  }

  /** Share of blocks held by requests, 0–1 (evictable cached blocks count as free, as in vLLM). */
  get usage(): number {
    return this.used / this.totalBlocks;
  }

  /** Blocks a request could still get. */
  get freeBlocks(): number {
    return this.totalBlocks - this.used;
  }

  /** The cached blocks that start `hashes`, at most `maxBlocks` of them; nothing is acquired yet. */
  lookup(hashes: readonly number[], maxBlocks: number): KvBlock[] {
    const hits: KvBlock[] = [];
    for (const hash of hashes) {
      if (hits.length >= maxBlocks) break;
      const block = this.cached.get(hash);
      if (!block) break;
      hits.push(block);
    }
    return hits;
  }

  /** Gives an empty holder the `hits` plus fresh blocks up to `tokens`; false (no change) if they don't fit. */
  admit(holder: KvHolder, hits: readonly KvBlock[], tokens: number): boolean {
    const reviving = hits.filter((b) => b.refs === 0).length;
    const fresh = Math.max(0, blocksFor(tokens) - hits.length);
    if (reviving + fresh > this.freeBlocks) return false;
    for (const block of hits) {
      if (block.refs === 0) {
        this.evictable.delete(block.hash!);
        this.used += 1;
      }
      block.refs += 1;
      holder.blocks.push(block);
    }
    holder.blockCount = hits.length;
    holder.committedBlocks = hits.length;
    return this.grow(holder, tokens);
  }

  /** Grows `holder` to hold `tokens` tokens; false (no change) when too few blocks are free. */
  grow(holder: KvHolder, tokens: number): boolean {
    const needed = blocksFor(tokens) - holder.blockCount;
    if (needed <= 0) return true;
    if (needed > this.freeBlocks) return false;
    for (let i = 0; i < needed; i++) {
      if (this.prefixCaching) holder.blocks.push(this.takeFree());
      this.used += 1; // before the next takeFree(), which counts the never-named free blocks
    }
    holder.blockCount += needed;
    return true;
  }

  /** Names the holder's leading blocks by `hashes` once `computedTokens` cover them, for sharing. */
  commit(holder: KvHolder, hashes: readonly number[], computedTokens: number): void {
    const full = Math.min(Math.floor(computedTokens / BLOCK_SIZE), hashes.length, holder.blocks.length);
    for (let i = holder.committedBlocks; i < full; i++) {
      const block = holder.blocks[i]!;
      const hash = hashes[i]!;
      if (block.hash === undefined && !this.cached.has(hash)) {
        block.hash = hash;
        this.cached.set(hash, block);
      }
    }
    holder.committedBlocks = Math.max(holder.committedBlocks, full);
  }

  /** Returns every block of `holder`; named blocks stay cached until evicted. */
  release(holder: KvHolder): void {
    if (this.prefixCaching) {
      // Last block first, so a prompt's tail is evicted before its (more shareable) head.
      for (let i = holder.blocks.length - 1; i >= 0; i--) {
        const block = holder.blocks[i]!;
        block.refs -= 1;
        if (block.refs > 0) continue;
        this.used -= 1;
        if (block.hash !== undefined) this.evictable.set(block.hash, block);
      }
    } else {
      this.used -= holder.blockCount;
    }
    holder.blocks = [];
    holder.blockCount = 0;
    holder.committedBlocks = 0;
  }

  /**
   * Forgets every cached prefix, as vLLM's POST /reset_prefix_cache (SGLang's /flush_cache): no
   * later prompt hits a block named before now. Blocks still held stay allocated to their requests
   * but are no longer shared. Returns the blocks forgotten.
   */
  resetPrefixCache(): number {
    const forgotten = this.cached.size;
    for (const block of this.cached.values()) block.hash = undefined;
    this.cached.clear();
    this.evictable.clear();
    return forgotten;
  }

  // A block nobody holds: a never-named one if any, else the oldest evictable (forgetting its hash).
  private takeFree(): KvBlock {
    if (this.totalBlocks - this.used - this.evictable.size <= 0) {
      const oldest = this.evictable.values().next().value!;
      this.evictable.delete(oldest.hash!);
      this.cached.delete(oldest.hash!);
    }
    return { hash: undefined, refs: 1 };
  }
}

function blocksFor(tokens: number): number {
  return Math.ceil(tokens / BLOCK_SIZE);
}
