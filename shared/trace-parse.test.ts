import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan } from './plan.js';
import { impliedPrefixHits } from './prefix-implied.js';
import { buildSchedule } from './schedule.js';
import { parseTrace } from './trace-parse.js';
import { attachWorkloadInputs, readWorkloadInputs, sliceTrace } from './workload-files.js';

const MOONCAKE = [
  '{"timestamp": 0, "input_length": 600, "output_length": 10, "hash_ids": [1, 2]}',
  '{"timestamp": 0, "input_length": 700, "output_length": 11, "hash_ids": [1, 3]}',
  '',
  '{"timestamp": 1500.5, "input_length": 100, "output_length": 12, "hash_ids": [4]}',
].join('\n');

describe('trace files', () => {
  it('reads Mooncake rows with their lines, keeping equal timestamps', () => {
    const t = parseTrace(MOONCAKE, 'mooncake');
    expect(t.problems).toEqual([]);
    expect(t.rowsInFile).toBe(3);
    expect(t.rows.map((r) => [r.t_ms, r.input_tokens, r.output_tokens, r.hash_ids, r.line])).toEqual([
      [0, 600, 10, [1, 2], 1],
      [0, 700, 11, [1, 3], 2],
      [1500.5, 100, 12, [4], 4],
    ]);
  });

  it('names the line of every bad row', () => {
    const bad = [
      '{"timestamp": 5, "input_length": 1, "output_length": 1}',
      '{"timestamp": -1, "input_length": 0, "output_length": 1}',
      'nope',
      '{"timestamp": 4, "input_length": 1, "output_length": 1}',
    ].join('\n');
    expect(parseTrace(bad, 'mooncake').problems).toEqual([
      'line 2: "timestamp" must be >= 0 (is -1); "input_length" must be an integer >= 1',
      expect.stringMatching(/^line 3: invalid JSON/),
      "line 4: timestamp goes back in time (before line 1's); the rows must be sorted by time",
    ]);
  });

  it('reads Azure CSV times as offsets from the first row, to the sub-millisecond', () => {
    const csv = 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9285530,396,109\n';
    const t = parseTrace(csv, 'azure');
    expect(t.problems).toEqual([]);
    expect(t.rows.map((r) => [r.input_tokens, r.output_tokens, r.line])).toEqual([
      [374, 44, 2],
      [396, 109, 3],
    ]);
    expect(t.rows[1]!.t_ms - t.rows[0]!.t_ms).toBeCloseTo(4247.963, 3);
  });

  it('skips BurstGPT failures (0 response tokens) and reports a missing column', () => {
    const csv =
      'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n45,ChatGPT,1087,0,1087,Conversation log\n';
    const t = parseTrace(csv, 'burstgpt');
    expect([t.rows.length, t.skipped, t.rows[0]!.t_ms]).toEqual([1, 1, 5000]);
    expect(parseTrace('Timestamp,Model\n1,x\n', 'burstgpt').problems).toEqual([
      'line 1: header lacks columns "Request tokens", "Response tokens"',
    ]);
  });

  it('reads quoted fields with newlines and commas (csv-parse), naming the line each row starts on', () => {
    const csv = [
      'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type,Note',
      '1,ChatGPT,10,5,15,Conversation log,"two',
      'lines, and a comma"',
      '2,GPT-4,20,6,26,API log,plain',
      '',
      '3,ChatGPT,x,7,37,API log,"""quoted"""',
    ].join('\r\n');
    const t = parseTrace(csv, 'burstgpt');
    expect(t.rows.map((r) => [r.t_ms, r.input_tokens, r.line])).toEqual([
      [1000, 10, 2],
      [2000, 20, 4],
    ]);
    expect(t.problems).toEqual(['line 6: "Request tokens" must be an integer >= 1']);
    expect(parseTrace('Timestamp,Model,Request tokens,Response tokens\n1,"open,5,5\n', 'burstgpt').problems[0]).toMatch(
      /^line \d+: not CSV: /,
    );
  });

  it('filters BurstGPT rows by Model and Log Type, as a plan sets them', () => {
    const rows = [
      '1,ChatGPT,10,5,15,Conversation log',
      '2,GPT-4,20,6,26,Conversation log',
      '3,ChatGPT,30,7,37,API log',
      '4,ChatGPT,40,0,40,Conversation log',
    ];
    const csv = `Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n${rows.join('\n')}\n`;
    const chatConversations = parseTrace(csv, 'burstgpt', { models: ['ChatGPT'], log_types: ['Conversation log'] });
    expect(chatConversations.rows.map((r) => r.input_tokens)).toEqual([10]);
    expect([chatConversations.filtered, chatConversations.skipped, chatConversations.rowsInFile]).toEqual([2, 1, 4]);
    expect(parseTrace(csv, 'burstgpt', { models: ['GPT-4', 'ChatGPT'] }).rows.map((r) => r.input_tokens)).toEqual([10, 20, 30]);
    expect(parseTrace(csv, 'burstgpt', { log_types: ['API log'] }).rows.map((r) => r.t_ms)).toEqual([3000]);
    // Azure's 2023 files have no Model column: a filter on it says so, as does one on a Mooncake trace.
    expect(parseTrace('TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,1,1\n', 'azure', { models: ['x'] }).problems).toEqual([
      'line 1: header lacks column "Model"',
    ]);
    expect(parseTrace(MOONCAKE, 'mooncake', { log_types: ['API log'] }).problems).toEqual([
      'line 1: a Mooncake trace has no Model or Log Type column to filter on',
    ]);
  });

  it('slices from start_s, scales time, stops at limit and at the run end', () => {
    const rows = parseTrace(MOONCAKE, 'mooncake').rows;
    expect(sliceTrace(rows, { file: '', format: 'mooncake', time_scale: 0.5 }, 60).map((r) => r.at_ns)).toEqual([0, 0, 750_250_000]);
    expect(sliceTrace(rows, { file: '', format: 'mooncake', start_s: 1 }, 60).map((r) => [r.at_ns, r.line])).toEqual([[500_500_000, 4]]);
    expect(sliceTrace(rows, { file: '', format: 'mooncake', limit: 2 }, 60)).toHaveLength(2);
    expect(sliceTrace(rows, { file: '', format: 'mooncake' }, 1.5)).toHaveLength(2);
  });

  it('reads the files a plan names with their SHA-256, and reports unreadable ones by path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lf-trace-'));
    writeFileSync(join(dir, 't.jsonl'), MOONCAKE);
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'p',
      seed: 1,
      duration_s: 10,
      classes: [{ name: 'c', prompt: {}, load: { model: 'trace', phases: [], trace: { file: join(dir, 't.jsonl'), format: 'mooncake' } } }],
    };
    const withInputs = await attachWorkloadInputs(plan);
    expect(withInputs.inputs!.files).toEqual([
      {
        class: 'c',
        kind: 'trace',
        path: join(dir, 't.jsonl'),
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        rows_in_file: 3,
        rows_used: 3,
      },
    ]);
    const s = buildSchedule(withInputs).classes[0]!;
    expect(Array.from(s.arrivalsNs)).toEqual([0, 0, 1_500_500_000]);
    expect(s.requests!.inputTokens).toEqual([600, 700, 100]);
    expect(s.requests!.hashIds).toEqual([[1, 2], [1, 3], [4]]);
    const missing = {
      ...plan,
      classes: [
        { ...plan.classes[0]!, load: { ...plan.classes[0]!.load, trace: { file: join(dir, 'no.jsonl'), format: 'mooncake' as const } } },
      ],
    };
    expect((await readWorkloadInputs(missing)).problems).toEqual([
      `classes[0].load.trace.file: cannot read ${join(dir, 'no.jsonl')} (ENOENT)`,
    ]);
    await expect(attachWorkloadInputs(missing)).rejects.toMatchObject({ code: 'LF_PLAN_INVALID', exitCode: 2 });
  });

  it('implies prefix hits block by block (the arithmetic the replay test checks engine-sim against)', () => {
    // Row 2 shares block 1 (512 tokens) with row 1; row 3 repeats row 1's ids but is 100 tokens
    // longer, so it hits row 1's 600 tokens rounded down to 16s: 592; row 4 shares nothing.
    const rows = [
      { input_tokens: 600, hash_ids: [1, 2] },
      { input_tokens: 700, hash_ids: [1, 3] },
      { input_tokens: 700, hash_ids: [1, 2] },
      { input_tokens: 40, hash_ids: [9] },
    ];
    expect(impliedPrefixHits(rows, 512)).toEqual({ queryTokens: 2040, hitTokens: 512 + 592, perRow: [0, 512, 592, 0] });
    // A row identical to an earlier one still computes its last token: ⌊(600 − 1)/16⌋·16 = 592.
    expect(impliedPrefixHits([rows[0]!, rows[0]!], 512).hitTokens).toBe(592);
  });
});
