// `npm run bench`: runs every suite in order in one invocation (so ratios between figures hold on
// a noisy machine) and prints ONE JSON document on stdout and a readable table on stderr.
//
// Options: --only <suite>[,<suite>…] (repeatable) runs a subset; --quick is the CI smoke (tiny
// loads: it checks that the harness works and every key is there, never the numbers);
// --base-dist DIR runs an earlier build's agent beside this one's in agent_hot_path,
// timing_accuracy and schedule_fidelity (before and after on the same machine, one run).
import { cpus, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { agentHotPath } from './agent-hot-path.js';
import { coordinatorIngest } from './coordinator-ingest.js';
import { coordinatorMemory } from './coordinator-memory.js';
import { engineSim } from './engine-sim.js';
import { longContext } from './long-context.js';
import { scale } from './scale.js';
import { scheduleFidelity } from './schedule-fidelity.js';
import { selfTest } from './self-test.js';
import type { Suite, SuiteResult } from './suite.js';
import { withGoalMet } from './suite.js';
import { renderTable } from './table.js';
import { timingAccuracy } from './timing-accuracy.js';
import { workers } from './workers.js';

const SUITES: readonly Suite[] = [
  agentHotPath,
  timingAccuracy,
  scheduleFidelity,
  scale,
  workers,
  coordinatorIngest,
  coordinatorMemory,
  engineSim,
  longContext,
  selfTest,
];

function selected(only: readonly string[]): Suite[] {
  if (only.length === 0) return [...SUITES];
  const names = only.flatMap((o) => o.split(',')).map((s) => s.trim());
  const unknown = names.filter((n) => !SUITES.some((s) => s.name === n));
  if (unknown.length > 0) throw new Error(`unknown suite ${unknown.join(', ')}; suites: ${SUITES.map((s) => s.name).join(', ')}`);
  return SUITES.filter((s) => names.includes(s.name));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string', multiple: true, default: [] },
      quick: { type: 'boolean', default: false },
      'base-dist': { type: 'string' },
    },
  });
  const suites = selected(values.only);
  const log = (line: string): void => void process.stderr.write(`[bench] ${line}\n`);
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  const results: Record<string, SuiteResult['figures']> = {};
  const tables: [string, SuiteResult['table']][] = [];
  const seconds: Record<string, number> = {};
  for (const suite of suites) {
    const s0 = performance.now();
    try {
      const baseDist = values['base-dist'] === undefined ? {} : { baseDist: resolve(values['base-dist']) };
      const r = await suite.run({ quick: values.quick, log, ...baseDist });
      results[suite.name] = withGoalMet(r.figures);
      tables.push([suite.name, r.table]);
    } catch (err) {
      // One broken suite must not hide the others' figures; its error is its figure.
      results[suite.name] = { error: (err as Error).message.slice(0, 2000) };
      tables.push([suite.name, [{ figure: 'error', value: (err as Error).message.split('\n')[0]!.slice(0, 100) }]]);
    }
    seconds[suite.name] = Math.round(performance.now() - s0) / 1000;
  }
  const doc = {
    schema: 'loadfleet.bench/v1',
    started_at: startedAt,
    quick: values.quick,
    machine: {
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model ?? null,
      memory_gib: Math.round(totalmem() / 2 ** 30),
      node: process.version,
    },
    suite_seconds: seconds,
    total_seconds: Math.round(performance.now() - t0) / 1000,
    ...results,
  };
  process.stderr.write(renderTable(tables));
  process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench: ${(err as Error).message}\n`);
    process.exit(2);
  },
);
