import { describe, expect, it } from 'vitest';
import { reachability } from './reachability.js';

const ok = (id: string) => ({
  agentId: id,
  host: 'h',
  warmUp: { url: 'http://llm:8000/v1/models', status: 200, error: null, latency_ms: 3 },
});
const refused = (id: string) => ({
  agentId: id,
  host: 'h',
  warmUp: { url: 'http://llm:8000/v1/models', status: null, error: 'connect ECONNREFUSED 10.0.0.5:8000', latency_ms: 1.2 },
});

describe('reachability before the load', () => {
  it('any HTTP status is an answer (a server without /models, or one that wants a key, is reachable)', () => {
    const w = { ...ok('a'), warmUp: { ...ok('a').warmUp, status: 404 } };
    expect(reachability([w], 0)).toMatchObject({ unreachable: [], refusal: null });
  });

  it('within --max-agent-loss the run goes on, and who could not reach it is kept', () => {
    const r = reachability([ok('a'), refused('b'), ok('c')], 1);
    expect(r.refusal).toBeNull();
    expect(r.unreachable).toEqual([
      { agentId: 'b', host: 'h', error: 'GET http://llm:8000/v1/models: connect ECONNREFUSED 10.0.0.5:8000' },
    ]);
    expect(r.lines[1]).toBe(
      'agent b (h): target NOT reached, GET http://llm:8000/v1/models: connect ECONNREFUSED 10.0.0.5:8000 (after 1.2 ms)',
    );
  });

  it('beyond it the run is refused with every agent’s error', () => {
    expect(reachability([refused('a'), refused('b'), ok('c')], 1).refusal).toBe(
      '2 of 3 agents cannot reach the target (--max-agent-loss 1): a: GET http://llm:8000/v1/models: connect ECONNREFUSED 10.0.0.5:8000; b: GET http://llm:8000/v1/models: connect ECONNREFUSED 10.0.0.5:8000',
    );
  });

  it('an agent too old to report its warm-up counts as reachable', () => {
    expect(reachability([{ agentId: 'a', host: 'h', warmUp: undefined }], 0).refusal).toBeNull();
  });
});
