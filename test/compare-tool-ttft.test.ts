// End to end: another tool's TTFT is compared on its own definition. engine-sim streams 8
// reasoning tokens (10 ms apart) before the answer, so the first content token comes ~80 ms after
// the first output. A vLLM bench serve and an AIPerf baseline written from the very same run stamp
// TTFT at the first token of any kind, as those tools do; compared with that run, loadfleet reads
// the candidate's TTFT from its first output too, so the change is nil and the gate passes, and
// limits says how TTFT was read. Reading the candidate's first content token instead would have
// shown +80 ms.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../shared/errors.js';
import { writeForeignBaselines } from './foreign-baselines.js';
import { constantRatePlan, onlyRunDir, readRunJson, runCoordinator, startNode, tempDir, writePlan } from './harness.js';

const work = tempDir();
const plan = constantRatePlan('tool-ttft', 4, 8, { input_tokens: 16, output_tokens: 16 });

describe("a tool's TTFT on its own definition (reasoning included)", () => {
  let run: string;
  let files: Record<string, string>;
  beforeAll(async () => {
    const r = await runCoordinator([
      '--plan',
      writePlan(work, plan),
      '--out',
      join(work, 'run'),
      '--quiet',
      '--sim-arg=--ttft-ms=40',
      '--sim-arg=--itl-ms=10',
      '--sim-arg=--reasoning-tokens=8',
    ]);
    expect(r.code, r.stderr).toBe(ExitCode.OK);
    run = onlyRunDir(join(work, 'run'));
    files = writeForeignBaselines(run, work);
  }, 60_000);

  it.each(['vllm-detailed', 'aiperf-records'])('%s of the same run: TTFT read from the first output, no change, exit 0', async (kind) => {
    const content = readRunJson(run).classes.rt.windows.all.ttft_p50_ms;
    const out = join(work, `cmp-${kind}`);
    const r = await startNode('coordinator/main.js', [
      'compare',
      files[kind]!,
      run,
      '--out',
      out,
      '--fail-on-regression',
      '--gate-on',
      'ttft_p50_ms',
    ]).done;
    expect(r.code, r.stderr + r.stdout).toBe(ExitCode.OK);
    const c = JSON.parse(readFileSync(join(out, 'comparison.json'), 'utf8'));
    const p50 = c.classes.rt.all.find((f: any) => f.figure === 'ttft_p50_ms');
    console.log(`${kind}: ttft p50 ${p50.baseline} → ${p50.candidate} ms (the run's own first-content p50 ${content} ms)`);
    expect(p50.delta).toBeCloseTo(0, 3);
    // The first content token comes after 8 reasoning tokens 10 ms apart: the tool's TTFT is ~80 ms earlier.
    expect(content - p50.candidate).toBeGreaterThan(60);
    expect(c.limits).toContainEqual(
      expect.stringMatching(/^TTFT is compared as .* defines it: from the actual send to the first token of any kind, reasoning included/),
    );
    expect(p50.verdict).toBe('within_noise');
  });
});
