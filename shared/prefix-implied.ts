// The prefix-cache hits a trace implies: replaying its rows in order into a cache of 16-token
// blocks that never evicts, how many prompt tokens find their prefix already computed. It is the
// arithmetic the replay test and run.json compare engine-sim's `vllm:prefix_cache_hits_total` /
// `queries_total` against (vLLM and engine-sim count both in tokens).

/** KV cache block size of vLLM and engine-sim. */
export const KV_BLOCK_TOKENS = 16;

/** Tokens queried and hit, summed over the rows. */
export interface ImpliedHits {
  queryTokens: number;
  hitTokens: number;
  /** Hit tokens of each row, in row order. */
  perRow: number[];
}

/**
 * Row r's prompt is its hash ids' blocks of `blockTokens` (the last possibly partial). Block b of a
 * row is the same text as block b of any row with the same leading ids h1..hb, so its leading
 * 16-token chunks are cached when an earlier row with that id path computed them (a row commits
 * each full 16-token chunk of its prompt). A row hits the leading run of cached chunks, at most
 * ⌊(input − 1)/16⌋ of them (the last token is always computed, as in vLLM).
 */
export function impliedPrefixHits(
  rows: readonly { input_tokens: number; hash_ids: readonly number[] }[],
  blockTokens: number,
): ImpliedHits {
  // id path "h1,…,hb" → tokens of block b (multiple of 16) some earlier row computed.
  const computed = new Map<string, number>();
  let queryTokens = 0;
  let hitTokens = 0;
  const perRow: number[] = [];
  for (const row of rows) {
    const n = row.input_tokens;
    const blocks = Math.min(row.hash_ids.length, Math.ceil(n / blockTokens));
    const paths: string[] = [];
    for (let b = 0; b < blocks; b++) paths.push(b === 0 ? String(row.hash_ids[0]) : `${paths[b - 1]},${row.hash_ids[b]}`);
    let hits = 0;
    for (let b = 0; b < blocks; b++) {
      const inRow = Math.min(blockTokens, n - b * blockTokens);
      const hit = Math.min(computed.get(paths[b]!) ?? 0, inRow - (inRow % KV_BLOCK_TOKENS));
      hits += hit;
      if (hit < blockTokens) break;
    }
    queryTokens += n;
    perRow.push(Math.min(hits, Math.floor((n - 1) / KV_BLOCK_TOKENS) * KV_BLOCK_TOKENS));
    hitTokens += perRow.at(-1)!;
    const full = Math.floor(n / KV_BLOCK_TOKENS) * KV_BLOCK_TOKENS;
    for (let b = 0; b < blocks; b++) {
      const done = Math.min(blockTokens, Math.max(0, full - b * blockTokens));
      if (done > (computed.get(paths[b]!) ?? 0)) computed.set(paths[b]!, done);
    }
  }
  return { queryTokens, hitTokens, perRow };
}
