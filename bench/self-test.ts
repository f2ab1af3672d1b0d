// self_test: the agent's join-time self-test (agent/self-test), run as a user's agent runs it
// (`agent --self-test-only --self-test run`, a fresh process each time): how long it takes, and
// the limits it states — CPU per request start, chunk and finish, memory per open stream, the
// event-loop utilisation at which the first-token stamp error passes 1/5/20 ms, and how often the
// stamp's uncertainty estimate covered the error. Goals: it takes "a couple of seconds" (≤ 3 s)
// and an open stream costs ≤ 10 KiB (measured here at the self-test's 256 streams).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT_NODE_FLAGS } from '../shared/agent-node-flags.js';
import type { SelfTestFigures } from '../shared/self-test.js';
import { distFile, startChild } from './spawn.js';
import type { BenchContext, Suite, SuiteResult } from './suite.js';
import { fmt } from './suite.js';

const DURATION_GOAL_MS = 3000;
const MEMORY_GOAL_BYTES = 10 * 1024;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
}

async function once(dir: string | null): Promise<SelfTestFigures> {
  // --quick checks the harness, not the numbers: this host's cached figures do (measured if none).
  const mode = dir === null ? 'cached' : 'run';
  const c = startChild(process.execPath, [...AGENT_NODE_FLAGS, distFile('agent/main.js'), '--self-test-only', '--self-test', mode], {
    ...(dir !== null && { LOADFLEET_SELF_TEST_DIR: dir }),
  });
  const done = await c.exited;
  if (done.code !== 0) throw new Error(`agent --self-test-only exited ${done.code}: ${done.stderr.slice(-1000)}`);
  return JSON.parse(done.stdout) as SelfTestFigures;
}

export const selfTest: Suite = {
  name: 'self_test',
  async run(ctx: BenchContext): Promise<SuiteResult> {
    // Its own cache directory: the user's cached figures are neither read nor replaced.
    const dir = ctx.quick ? null : mkdtempSync(join(tmpdir(), 'loadfleet-bench-self-test-'));
    const runs: SelfTestFigures[] = [];
    for (let i = 0; i < (ctx.quick ? 1 : 3); i++) {
      runs.push(await once(dir));
      ctx.log(`self_test: run ${i + 1}: ${runs.at(-1)!.duration_ms} ms`);
    }
    const m = (f: (r: SelfTestFigures) => number): number => median(runs.map(f));
    const durationMs = m((r) => r.duration_ms);
    const memory = m((r) => r.memory_bytes_per_stream);
    const eluAt = (level: string): number | null => {
      const v = runs.map((r) => r.elu_at_error_ms[level]).filter((x): x is number => x !== null && x !== undefined);
      return v.length === runs.length ? median(v) : null;
    };
    const figures = {
      runs: runs.length,
      source: ctx.quick ? "--quick: this host's cached figures (agent --self-test cached)" : 'measured in fresh processes',
      definition:
        'medians over fresh agent processes of agent --self-test-only --self-test run; each field as defined in shared/self-test.ts',
      duration_ms: durationMs,
      cpu_us_per_start: m((r) => r.cpu_us_per_start),
      cpu_us_per_chunk: m((r) => r.cpu_us_per_chunk),
      cpu_us_per_finish: m((r) => r.cpu_us_per_finish),
      memory_bytes_per_stream: memory,
      memory_streams: runs[0]!.memory_streams,
      elu_at_error_ms: { '1ms': eluAt('1ms'), '5ms': eluAt('5ms'), '20ms': eluAt('20ms') },
      uncertainty_coverage: m((r) => r.uncertainty_coverage ?? 0),
      free_cores: runs.map((r) => r.free_cores),
      goals: {
        duration_ms: `≤ ${DURATION_GOAL_MS}`,
        memory_bytes_per_stream: `≤ ${MEMORY_GOAL_BYTES} (at the self-test's ${runs[0]!.memory_streams} streams; the 10,000-stream figure is the scale suite's)`,
      },
      goals_met: {
        duration_ms: durationMs <= DURATION_GOAL_MS,
        memory_bytes_per_stream: memory <= MEMORY_GOAL_BYTES,
      },
      run_figures: runs,
    };
    return {
      figures,
      table: [
        { figure: 'self-test wall time', value: `${fmt(durationMs)} ms`, goal: `≤ ${DURATION_GOAL_MS} ms` },
        {
          figure: 'CPU per start / chunk / finish',
          value: `${fmt(figures.cpu_us_per_start)} / ${fmt(figures.cpu_us_per_chunk, 1)} / ${fmt(figures.cpu_us_per_finish)} µs`,
        },
        { figure: 'memory per open stream', value: `${fmt(memory / 1024, 1)} KiB`, goal: '≤ 10 KiB' },
        {
          figure: 'ELU where stamp error p99 passes 1 / 5 / 20 ms',
          value: ['1ms', '5ms', '20ms'].map((l) => fmt(eluAt(l), 2)).join(' / '),
        },
        { figure: 'uncertainty estimate coverage', value: `${fmt(figures.uncertainty_coverage * 100, 1)}%` },
      ],
    };
  },
};
