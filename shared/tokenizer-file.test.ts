import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TINY_TEMPLATE_TOKENS, tinyCount, writeTinyTokenizer } from '../test/tiny-tokenizer.js';
import { promptFill, promptHead, promptText } from './prompt-text.js';
import { loadTokenizerFile } from './tokenizer-file.js';

describe('a tokenizer file', () => {
  const path = writeTinyTokenizer(mkdtempSync(join(tmpdir(), 'lf-tok-')));

  it('counts prompt text as the model would: BOS for completions, the chat template for chat', async () => {
    const t = await loadTokenizerFile(path);
    const text = promptText(promptFill(3, 'rt', 0, 200), promptHead('run', 'rt', 17));
    expect(tinyCount(text)).toBeGreaterThan(200); // long words and the head cost several tokens
    expect(t.countRequest(text, 'completions')).toBe(1 + tinyCount(text));
    expect(t.countRequest(text, 'chat')).toBe(TINY_TEMPLATE_TOKENS + tinyCount(text));
    expect(t.countOutput(' the and of')).toBe(3);
    expect(t.note).toContain('with its chat template');
  });

  it('says what is wrong with a file it cannot use', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lf-tok-'));
    await expect(loadTokenizerFile(join(dir, 'missing.json'))).rejects.toThrow(/^cannot read .*missing\.json: ENOENT/);
    writeFileSync(join(dir, 'bad.json'), '{"model": ');
    await expect(loadTokenizerFile(join(dir, 'bad.json'))).rejects.toThrow(/bad\.json is not JSON/);
  });
});
