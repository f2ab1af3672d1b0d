// What the comparison reads TTFT as: the class's SLO basis (from the intended send with
// slo.basis intended, as the verdict gates it), the agents' timing uncertainty per window, and a
// tool's definition (first output of any kind) re-read from the candidate's stamps, or refused
// when the stamps or the file cannot say.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringifyExact } from '../../shared/json.js';
import type { RunJson } from '../../shared/run-schema.js';
import { runClass, runJson } from '../run-json.test-kit.js';
import { candidateAsTool } from './baselines/tool-ttft.js';
import type { ForeignBaseline } from './baselines/types.js';
import { compareRuns } from './figures.js';
import { loadRun } from './load.js';

const T0 = 1_800_000_000_000_000_000n;
const MS = 1_000_000n;

/** A run directory of 40 requests: intended at i·100 ms, sent 30 ms late, first output +20 ms, first content +50 ms, done +80 ms. */
function runDir(basis: 'sent' | 'intended', outputStamped = true): string {
  const dir = mkdtempSync(join(tmpdir(), 'lf-basis-'));
  const plan = {
    schema: 'loadfleet.plan/v1',
    name: 'b',
    seed: 1,
    duration_s: 4,
    classes: [{ name: 'rt', slo: { ttft_p95_ms: 500, basis }, prompt: { input_tokens: 8, output_tokens: 4 }, load: {} }],
  };
  const doc = runJson({
    run_id: `r-${basis}`,
    started_at_unix_ns: T0,
    plan: plan as unknown as RunJson['plan'],
    classes: { rt: runClass({ windows: { all: {} } }) },
  });
  writeFileSync(join(dir, 'run.json'), stringifyExact(doc));
  const rows = Array.from({ length: 40 }, (_, i) => {
    const intended = T0 + BigInt(i) * 100n * MS;
    const sent = intended + 30n * MS;
    return `{"class":"rt","status":"ok","intended_unix_ns":${intended},"sent_unix_ns":${sent},"first_output_unix_ns":${outputStamped || i > 0 ? sent + 20n * MS : 'null'},"first_content_unix_ns":${sent + 50n * MS},"first_content_uncertainty_ns":${(i + 1) * 100_000},"done_unix_ns":${sent + 80n * MS},"completion_tokens":4,"output_token_source":"usage"}`;
  });
  writeFileSync(join(dir, 'requests.ndjson'), `${rows.join('\n')}\n`);
  return dir;
}

const tool = (ttftEnds: ForeignBaseline['ttftEnds']) => ({ tool: 'vLLM bench serve', ttftEnds }) as ForeignBaseline;

describe('TTFT as the comparison reads it', () => {
  it('on the SLO basis: from the intended send with basis intended (the 30 ms send delay counts), from the send otherwise', async () => {
    const sent = await loadRun(runDir('sent'));
    const intended = await loadRun(runDir('intended'));
    expect(sent.classes.rt!.all!.series.ttft[0]).toBeCloseTo(50, 9);
    expect(intended.classes.rt!.all!.series.ttft[0]).toBeCloseTo(80, 9);
    expect(intended.classes.rt!.all!.ttftBasis).toBe('intended');
    const c = compareRuns([sent], [intended], {
      confidence: 0.9,
      falseAlarm: 0.05,
      resamples: 200,
      relativeThreshold: 0.05,
      successThreshold: 0.01,
      seed: 'b',
    });
    expect(c.ttft_basis).toEqual({ rt: 'mixed' });
    expect(c.limits.at(-1)).toMatch(/^class rt: TTFT is read from the actual send in some runs and from the intended send in others/);
  });

  it("carries the window's first-token timing uncertainty: its p99, and how far each request's own can move each percentile", async () => {
    const w = (await loadRun(runDir('sent'))).classes.rt!.all!;
    // Uncertainties 0.1 … 4 ms: the p99 is rank 40 of 40.
    expect(w.timingUncertaintyMs).toBeCloseTo(4, 9);
    // Every TTFT is 50 ms: the p50 of 50 − u is rank 20 of the 40 (50 − 2.1), the p95 rank 38 (50 − 0.3), the p99 rank 40 (50 − 0.1).
    expect(w.timingMarginMs!.ttft_p50_ms).toBeCloseTo(2.1, 9);
    expect(w.timingMarginMs!.ttft_p95_ms).toBeCloseTo(0.3, 9);
    expect(w.timingMarginMs!.ttft_p99_ms).toBeCloseTo(0.1, 9);
    expect(w.timingMarginMs!.e2e_p50_ms).toBeCloseTo(2.1, 9);
  });

  it("reads a tool's TTFT from the first output, from the actual send, whatever the SLO basis", async () => {
    const { runs, note } = candidateAsTool([await loadRun(runDir('intended'))], 'rt', tool('first_output'));
    expect(runs[0]!.classes.rt!.all!.series.ttft[0]).toBeCloseTo(20, 9);
    expect(runs[0]!.classes.rt!.all!.ttftBasis).toBe('sent');
    expect(note).toMatch(/first token of any kind, reasoning included/);
  });

  it('refuses it, with the reason, when a success carries no first-output stamp, or the file does not say', async () => {
    const unstamped = candidateAsTool([await loadRun(runDir('sent', false))], 'rt', tool('first_output'));
    expect(unstamped.runs[0]!.classes.rt!.all!.fixed!.ttft_p95_ms).toEqual({ value: null, reason: unstamped.note });
    expect(unstamped.note).toMatch(/carries no first-output stamp \(first_output_unix_ns\)/);
    const unsaid = candidateAsTool([await loadRun(runDir('sent'))], 'rt', tool(null));
    expect(unsaid.note).toMatch(/does not say whether its TTFT stops at the first content token/);
    const c = compareRuns([await loadRun(runDir('sent'))], unsaid.runs, {
      confidence: 0.9,
      falseAlarm: 0.05,
      resamples: 200,
      relativeThreshold: 0.05,
      successThreshold: 0.01,
      seed: 'b',
      gateOn: ['rt/all/ttft_p95_ms'],
    });
    expect(c.classes.rt!.all!.find((f) => f.figure === 'ttft_p95_ms')).toMatchObject({ verdict: 'not_evaluable', reason: unsaid.note });
  });
});
