import { describe, expect, it } from 'vitest';
import { openaiChat } from '../shared/apis/openai-chat.js';
import { openaiCompletions } from '../shared/apis/openai-completions.js';
import { TextCapture } from './text-capture.js';

describe('TextCapture', () => {
  it('joins visible and reasoning text under both field names servers stream', () => {
    const c = new TextCapture(openaiChat);
    c.add('{"choices":[{"delta":{"reasoning_content":"let me "}}]}');
    c.add('{"choices":[{"delta":{"reasoning":"think"}}]}');
    c.add('{"choices":[{"delta":{"content":"Hello \\"you\\""}}]}');
    c.add('{"choices":[{"delta":{"content":"!"}}]}');
    expect(c.text()).toEqual({ visible: 'Hello "you"!', reasoning: 'let me think', complete: true });
  });

  it('reads completions text', () => {
    const c = new TextCapture(openaiCompletions);
    c.add('{"choices":[{"text":"a b"}]}');
    expect(c.text()).toEqual({ visible: 'a b', reasoning: '', complete: true });
  });

  it('is incomplete past its cap or with an event it cannot read (callers fail closed)', () => {
    const capped = new TextCapture(openaiChat, 60);
    capped.add('{"choices":[{"delta":{"content":"first"}}]}');
    capped.add('{"choices":[{"delta":{"content":"second"}}]}');
    expect(capped.text()).toEqual({ visible: 'first', reasoning: '', complete: false });
    const broken = new TextCapture(openaiChat);
    broken.add('{"choices":[{"delta":{"content":"x"');
    expect(broken.text().complete).toBe(false);
  });
});
