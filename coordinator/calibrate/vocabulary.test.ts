// The token-exact vocabulary found on a real Hugging Face tokenizer (the test's tiny BPE: only a
// space plus a short word is one token; its chat template adds seven), and every per-request text
// built from it counting exactly its planned tokens on that tokenizer.
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan, TrafficClass } from '../../shared/plan.js';
import { headOf, uncountedVocabulary } from '../../shared/prompt-vocabulary.js';
import { ClassRequests } from '../../shared/request-shape.js';
import { RequestText, sessionTurnTokens } from '../../shared/request-text.js';
import { sessionShapes } from '../../shared/session-shape.js';
import { loadTokenizerFile } from '../../shared/tokenizer-file.js';
import { TINY_TEMPLATE_TOKENS, writeTinyTokenizer } from '../../test/tiny-tokenizer.js';
import { calibratePlan } from './index.js';
import { CANDIDATE_WORDS, findVocabulary, oneTokenWords } from './vocabulary.js';

const TINY_ONE_TOKEN =
  'the of and to in is was for on are as be at by had not but or an we her she if so no can out up two may do any my now our man me did how too way'.split(
    ' ',
  );

const tokenizer = await loadTokenizerFile(writeTinyTokenizer(mkdtempSync(join(tmpdir(), 'lf-voc-'))));

const phases = [{ start_s: 0, duration_s: 10, rate_per_s: 4 }];
const CLASSES: TrafficClass[] = [
  {
    name: 'dist',
    prompt: { input_tokens: { distribution: 'lognormal', mu: 4.8, sigma: 0.6, min: 20, max: 600 }, output_tokens: 4 },
    load: { model: 'poisson', phases },
  },
  {
    name: 'chat',
    prompt: { output_tokens: 4 },
    load: { model: 'sessions', phases, session: { turns: 3, user_tokens: { distribution: 'uniform', min: 24, max: 80 }, think_time_s: 0 } },
  },
];

function plan(api: 'chat' | 'completions'): Plan {
  return {
    schema: 'loadfleet.plan/v1',
    name: 'voc',
    seed: 8,
    duration_s: 10,
    target: { base_url: 'http://x/v1', api, model: 'm', timeout_s: 5 },
    classes: CLASSES,
  };
}

describe('the token-exact vocabulary', () => {
  it.each([
    ['chat', TINY_TEMPLATE_TOKENS],
    ['completions', 1],
  ] as const)('%s: finds the one-token words, the opener and the template cost on a real tokenizer', async (api, empty) => {
    const found = await findVocabulary(async (c) => tokenizer.countRequest(c, api), 'tokenizer-file', 'tiny');
    const v = found.vocabulary!;
    expect(v, JSON.stringify(found)).not.toBeNull();
    // Exactly the candidates the tiny BPE merges into one token, in candidate order.
    expect(v.words).toEqual(CANDIDATE_WORDS.filter((w) => TINY_ONE_TOKEN.includes(w)));
    expect(v).toMatchObject({ opener: 'A', opener_tokens: 1, request_tokens: empty });
    // A further turn: <|assistant|>\n…<|end|>\n and <|user|>\n…<|end|>\n (chat); two newlines (completions).
    expect(v.turn_tokens).toBe(api === 'chat' ? 8 : 2);
    expect(v.attempts).toBeLessThan(400);
    console.log(`tiny tokenizer (${api}): ${v.note}; ${v.attempts} counts`);

    const p: Plan = { ...plan(api), prompt_vocabulary: v };
    // A lognormal class: every request exact, head included.
    const dist = new RequestText(p, CLASSES[0]!, 'run-1');
    const shapes = new ClassRequests(p, CLASSES[0]!);
    for (let i = 0; i < 40; i++) {
      const shape = shapes.at(i);
      const built = dist.build(i, shape);
      expect(built.planned).toBe(shape.inputTokens);
      expect(tokenizer.countRequest(built.messages, api)).toBe(shape.inputTokens);
    }
    // Sessions: each new message exactly user_tokens; each whole turn as planned when replies count as asked.
    const chat = new RequestText(p, CLASSES[1]!, 'run-1');
    const s = sessionShapes(8, CLASSES[1]!, 5);
    for (let session = 0; session < 5; session++) {
      const messages: { role: string; content: string }[] = [];
      for (let turn = 1; turn <= 3; turn++) {
        const user = s.userTokens[session]![turn - 1]!;
        const text = chat.userMessage(turn * 5 + session, turn, user);
        expect(tokenizer.countRequest(text, api) - empty).toBe(user);
        messages.push({ role: 'user', content: text });
        const all = tokenizer.countRequest(messages, api);
        expect(all).toBe(
          sessionTurnTokens(
            v,
            s.userTokens[session]!,
            [0, 0, 0].map(() => 1),
            turn,
          ),
        );
        // A reply of one one-token word (as if the server re-counted it as asked).
        messages.push({ role: 'assistant', content: `${v.opener}` });
      }
    }
  });

  it('heads are unique per request and cost the same on every request', async () => {
    const v = (await findVocabulary(async (c) => tokenizer.countRequest(c, 'chat'), 'tokenizer-file', 'tiny')).vocabulary!;
    const heads = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const h = [v.opener, ...headOf(v, 'run-1', 'dist', i)].join(' ');
      heads.add(h);
      if (i % 97 === 0) expect(tokenizer.countRequest(h, 'chat')).toBe(TINY_TEMPLATE_TOKENS + 1 + v.head_words);
    }
    expect(heads.size).toBe(3000);
    expect(headOf(v, 'run-2', 'dist', 7)).not.toEqual(headOf(v, 'run-1', 'dist', 7));
  });

  it('few or no one-token words: no vocabulary, and why', async () => {
    // Every word costs two tokens (a character-level tokenizer, say): nothing exact can be built.
    const words = (t: string): number => t.split(/\s+/).filter(Boolean).length;
    const found = await findVocabulary(
      async (c) => 3 + 2 * words(typeof c === 'string' ? c : c.map((m) => m.content).join(' ')),
      'server-tokenize',
      'two per word',
    );
    expect(found.vocabulary).toBeNull();
    expect(found.vocabulary === null && found.note).toBe(
      `0 of ${CANDIDATE_WORDS.length} candidate words count one token after a space (2 needed) (two per word)`,
    );
    // The search splits groups until each culprit is alone, and keeps the one-token words in order.
    const groups: number[] = [];
    const good = await oneTokenWords(CANDIDATE_WORDS, async (ws) => {
      groups.push(ws.length);
      return ws.reduce((n, w) => n + (w.length <= 2 ? 1 : 2), 0);
    });
    expect(good).toEqual(CANDIDATE_WORDS.filter((w) => w.length <= 2));
    expect(uncountedVocabulary('x').method).toBe('words-unverified');
  });
});

describe('a target with no one-token words', () => {
  it('the run says so: per-request classes words-unverified, and the sample check states how far off', async () => {
    // vLLM's dialect; every word costs two tokens and the template three (a character-level vocabulary, say).
    const count = (text: string): number => 3 + 2 * text.split(/\s+/).filter(Boolean).length;
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(raw || '{}');
        if (req.url !== '/tokenize') return res.writeHead(404).end();
        const text = (body.messages as { content: string }[]).map((m) => m.content).join(' ');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ count: count(text) }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
      const p = await calibratePlan(
        { ...plan('chat'), target: { base_url: base, api: 'chat', model: 'm', timeout_s: 5 } },
        'run-9',
        () => {},
      );
      expect(p.prompt_vocabulary).toMatchObject({ method: 'words-unverified' });
      expect(p.prompt_vocabulary!.note).toMatch(/^0 of 309 candidate words count one token after a space \(2 needed\)/);
      const dist = p.prompt_calibration!.dist!;
      expect(dist.method).toBe('words-unverified');
      // Counting works, so the bodies were still counted: none exact, about twice as long as planned.
      expect(dist.check!.sampled).toBeGreaterThan(10);
      expect(dist.check!.exact).toBe(0);
      expect(dist.check!.max_abs_difference).toBeGreaterThan(100);
    } finally {
      server.close();
    }
  });
});
