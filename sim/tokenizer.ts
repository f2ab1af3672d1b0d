// The simulator's tokenizer: one token per whitespace-separated word. It is deliberately trivial so
// a client can build prompts of an exact token count without asking the server.

/** Splits text into its tokens (words); empty or blank text has none. */
export function words(text: string): string[] {
  const trimmed = text.trim();
  return trimmed === '' ? [] : trimmed.split(/\s+/);
}

/** Number of tokens in `text`: its whitespace-separated word count. */
export function countTokens(text: string): number {
  return words(text).length;
}

/** FNV-1a 32-bit hash of a string's UTF-16 code units; stable across machines and runs. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Token ids of `text`: the FNV-1a hash of each word, as `/tokenize` reports them. */
export function tokenIds(text: string): number[] {
  return words(text).map(fnv1a32);
}
