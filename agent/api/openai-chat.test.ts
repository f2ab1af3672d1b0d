import { describe, expect, it } from 'vitest';
import { openaiChat } from './openai-chat.js';

const delta = (d: Record<string, unknown>) => ({ choices: [{ index: 0, delta: d }] });

describe('chat deltas (issue 22)', () => {
  it('takes one reasoning source when a server sends the same text as reasoning_content and reasoning', () => {
    expect(openaiChat.deltaText(delta({ reasoning_content: 'think', reasoning: 'think' }))).toEqual({ visible: '', reasoning: 'think' });
  });
  it('reads either name alone, and keeps both when they differ', () => {
    expect(openaiChat.deltaText(delta({ reasoning_content: 'a' })).reasoning).toBe('a');
    expect(openaiChat.deltaText(delta({ reasoning: 'b' })).reasoning).toBe('b');
    expect(openaiChat.deltaText(delta({ reasoning_content: 'a', reasoning: 'b', content: 'c' }))).toEqual({
      visible: 'c',
      reasoning: 'ab',
    });
  });
});
