import { describe, expect, it } from 'vitest';
import { endpointPaths } from './adapter.js';
import { openaiChat } from './openai-chat.js';
import { openaiCompletions } from './openai-completions.js';

describe('endpointPaths', () => {
  it('puts both APIs and the warm-up under a real /v1 base (the completions warm-up once asked /models)', () => {
    expect(endpointPaths('http://h:8000/v1', openaiChat)).toEqual({
      origin: 'http://h:8000',
      path: '/v1/chat/completions',
      modelsPath: '/v1/models',
    });
    expect(endpointPaths('http://h:8000/v1/', openaiCompletions)).toEqual({
      origin: 'http://h:8000',
      path: '/v1/completions',
      modelsPath: '/v1/models',
    });
    expect(endpointPaths('https://gw.example/llm/v1', openaiCompletions).modelsPath).toBe('/llm/v1/models');
  });
});
