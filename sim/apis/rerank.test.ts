import { describe, expect, it } from 'vitest';
import { parseRerankRequest, rerankBody } from './rerank.js';

const served = { model: 'm', maxModelLen: 64, loraModules: [] } as never;

describe('rerank', () => {
  it('counts every (query, document) pair and answers one score per document, best first', () => {
    const r = parseRerankRequest({ model: 'm', query: 'a b', documents: ['c d e', { text: 'f' }] }, served);
    expect(r.promptTokens).toBe(2 + 3 + 2 + 1);
    const body = rerankBody(r, 'm', 'id1') as { results: { index: number; relevance_score: number }[]; usage: object };
    expect(body.usage).toEqual({ total_tokens: 8 });
    expect(body.results.map((x) => x.index).sort()).toEqual([0, 1]);
    expect(body.results[0]!.relevance_score).toBeGreaterThanOrEqual(body.results[1]!.relevance_score);
  });

  it('refuses a body without a query or documents, with the parameter', () => {
    expect(() => parseRerankRequest({ documents: ['x'] }, served)).toThrow(/query must be a string/);
    expect(() => parseRerankRequest({ query: 'q', documents: [] }, served)).toThrow(/documents must be a non-empty array/);
    expect(() => parseRerankRequest({ query: 'q', documents: [3] }, served)).toThrow(/documents\[0\]/);
  });
});
