// The `coordinator sweep FILE` command: its flags and how they become stage run options. Kept here
// so main.ts gains one line.
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { loadSweepFile } from '../../shared/sweep-load.js';
import { EMBEDDED_SIM_ARGS } from '../default-plan.js';
import { executeSweep, sweepExitCode } from './run-sweep.js';

interface SweepOptions {
  agents: number;
  out: string;
  quiet?: boolean;
  joinTimeoutS: number;
  maxStartSkewMs: number;
  clockToleranceMs: number;
  onClockMismatch: 'fail' | 'align';
  simArg: string[];
  agentArg: string[];
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be an integer >= 1');
  return n;
}

function nonNegative(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('must be a number >= 0');
  return n;
}

/** Adds `sweep` to the coordinator's commands. */
export function sweepCommand(program: Command, collect: (value: string, previous: string[]) => string[]): void {
  program
    .command('sweep')
    .description("find a class's capacity under its SLO: one run per stage, then sweep.json and report.html")
    .argument('<file>', 'sweep file (JSON or YAML, loadfleet.sweep/v1)')
    .option('--agents <n>', 'local agents for every stage', positiveInt, 1)
    .option('--out <dir>', 'directory for sweep directories', 'sweeps')
    .option('--join-timeout-s <s>', 'how long to wait for the agents of a stage', positiveInt, 60)
    .option('--max-start-skew-ms <ms>', 'a larger measured start skew marks a stage run degraded', nonNegative, 5)
    .option('--clock-tolerance-ms <ms>', 'how far an agent may be from its declared common clock domain', nonNegative, 2)
    .addOption(
      new Option('--on-clock-mismatch <what>', 'a declared common domain that probes contradict')
        .choices(['fail', 'align'])
        .default('fail'),
    )
    .option('--quiet', 'print only the stage verdicts and the answer')
    .addOption(new Option('--sim-arg <arg>', 'extra argument for the embedded engine-sim (repeatable)').argParser(collect).default([]))
    .addOption(new Option('--agent-arg <arg>', 'extra argument for local agents (repeatable)').argParser(collect).default([]).hideHelp())
    .action(async (file: string, o: SweepOptions) => {
      process.exitCode = await sweep(file, o);
    });
}

async function sweep(file: string, o: SweepOptions): Promise<number> {
  // Every problem of the sweep file and its plan is reported here, before any load.
  const loaded = await loadSweepFile(file);
  const say = (line: string): void => void process.stderr.write(`[sweep] ${line}\n`);
  const result = await executeSweep(loaded, file, o.out, {
    agents: o.agents,
    listenHost: '127.0.0.1',
    listenPort: 0,
    token: randomBytes(24).toString('base64url'),
    spawnLocal: true,
    joinTimeoutMs: o.joinTimeoutS * 1000,
    simArgs: [...EMBEDDED_SIM_ARGS, ...o.simArg],
    agentArgs: o.agentArg,
    clockToleranceNs: o.clockToleranceMs * 1e6,
    onClockMismatch: o.onClockMismatch,
    maxStartSkewNs: o.maxStartSkewMs * 1e6,
    maxAgentLoss: 0,
    log: (line) => (line.startsWith('stage ') ? say(line) : o.quiet ? undefined : process.stderr.write(`[coordinator] ${line}\n`)),
    progress: (line) => void (o.quiet ? undefined : process.stderr.write(`${line}\n`)),
  });
  const d = result.doc as { capacity: number | null; bracket: [number | null, number | null]; unit: string; answer: string };
  process.stdout.write(
    `sweep ${result.dir}: capacity ${d.capacity ?? '-'} ${d.unit}, bracket [${d.bracket[0] ?? '-'}, ${d.bracket[1] ?? '-'}]\n${d.answer}\n`,
  );
  return sweepExitCode(result.doc);
}
