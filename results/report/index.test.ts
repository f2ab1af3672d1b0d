import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringifyExact } from '../../shared/json.js';
import { runClass, runJson } from '../run-json.test-kit.js';
import { writeReports } from './index.js';

const dir = () => mkdtempSync(join(tmpdir(), 'lf-report-unit-'));

describe('writeReports', () => {
  it('refuses a directory with neither run.json nor analysis.json, and a run.json that is not JSON', async () => {
    await expect(writeReports(dir())).rejects.toMatchObject({ code: 'LF_REPORT_INPUT', exitCode: 2 });
    const d = dir();
    writeFileSync(join(d, 'run.json'), '{"run_id": ');
    await expect(writeReports(d)).rejects.toMatchObject({ code: 'LF_ARTIFACT_INVALID', message: expect.stringContaining('is not JSON') });
  });

  it('refuses a run.json not of the published shape, naming every problem at its path', async () => {
    const d = dir();
    const { clock: _, ...noClock } = runJson();
    writeFileSync(join(d, 'run.json'), stringifyExact({ ...noClock, status: 'fine', classes: { chat: runClass({ requests: -1 }) } }));
    const err = await writeReports(d).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'LF_ARTIFACT_INVALID', exitCode: 2, message: expect.stringContaining('3 problems') });
    expect((err as { details: string[] }).details).toEqual([
      'status: must be one of "completed", "degraded", "aborted"',
      'clock: is required',
      'classes.chat.requests: must be >= 0',
    ]);
  });

  it('writes a run report from run.json alone, saying which files are absent', async () => {
    const d = dir();
    writeFileSync(join(d, 'run.json'), stringifyExact(runJson({ run_id: 'x', status: 'aborted' })));
    expect(await writeReports(d)).toEqual([join(d, 'report.html')]);
    const html = readFileSync(join(d, 'report.html'), 'utf8');
    expect(html).toContain('<span class="badge bad">aborted</span>');
    expect(html).toContain('histograms.hlog is absent');
    expect(html).toContain('requests.ndjson is absent');
  });

  it('writes an experiment report after its runs, linking the runs found by arm and repeat', async () => {
    const d = dir();
    mkdirSync(join(d, 'runs', 'a1'), { recursive: true });
    writeFileSync(
      join(d, 'runs', 'a1', 'run.json'),
      stringifyExact(runJson({ run_id: 'a1', experiment: { name: 'e', arm: 'A', repeat: 1 } })),
    );
    writeFileSync(
      join(d, 'analysis.json'),
      JSON.stringify({
        schema: 'loadfleet.analysis/v1',
        experiment: 'e',
        business_question: 'q',
        answer: 'a',
        claim_boundary: 'b',
        run_count: 1,
        all_data_quality_valid: true,
        all_slo_proof_valid: true,
        by_arm: { A: { runs: 1, m_ms: { median: 1, min: 1, max: 1 } } },
        comparison: {},
        runs: [{ arm: 'A', repeat: 1, m_ms: 1, run_name: 'A - repeat 1' }],
        definitions: {},
      }),
    );
    expect(await writeReports(d)).toEqual([join(d, 'runs', 'a1', 'report.html'), join(d, 'report.html')]);
    expect(readFileSync(join(d, 'report.html'), 'utf8')).toContain('<a href="runs/a1/report.html">A - repeat 1</a>');
  });
});
