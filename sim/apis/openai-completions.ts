// POST /v1/completions: a `prompt` string, max_tokens, stream_options.include_usage; answered as
// text_completion chunks ending in `data: [DONE]` (no reasoning), or one text_completion body.
import { invalid, optionalBool, promptText } from '../openai.js';
import type { SimGenerationApi } from './contract.js';
import { completionBody, OpenAiChunkStream } from './openai-wire.js';

/** The (legacy) completions API. */
export const api: SimGenerationApi = {
  kind: 'generation',
  name: 'completions',
  paths: ['/v1/completions'],
  idPrefix: 'cmpl',
  reasoning: false,
  read: (body) => {
    const streamOptions = body['stream_options'] ?? {};
    if (typeof streamOptions !== 'object' || streamOptions === null) throw invalid('stream_options must be an object', 'stream_options');
    return {
      texts: [promptText(body['prompt'])],
      imageTokens: 0,
      promptParam: 'prompt',
      maxTokens: body['max_tokens'],
      includeUsage: optionalBool((streamOptions as Record<string, unknown>)['include_usage'], 'stream_options.include_usage'),
      toolName: null,
    };
  },
  stream: (who, request, write) => new OpenAiChunkStream('completions', who, request.includeUsage, false, write),
  body: (who, _request, text, end) => completionBody('completions', who, text, end.finish, end.usage),
};
