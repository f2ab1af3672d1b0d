// The `coordinator sweep FILE` command: the shared fleet and run flags (as `start` and `experiment`
// have) plus --out. Kept here so main.ts gains one line.
import type { Command } from 'commander';
import { loadSweepFile } from '../../shared/sweep-load.js';
import type { RunFlags } from '../cli-options.js';
import { addRunFlags, runOptionsFromFlags } from '../cli-options.js';
import { withCostFlags } from '../cost/flags.js';
import { unfinishedSweep } from './resume-sweep.js';
import { executeSweep, sweepExitCode } from './run-sweep.js';

/** Adds `sweep` to the coordinator's commands. */
export function sweepCommand(program: Command): void {
  addRunFlags(
    program.command('sweep').description("find a class's capacity under its SLO: one run per stage, then sweep.json and report.html"),
  )
    .argument('<file>', 'sweep file (JSON or YAML, loadfleet.sweep/v1)')
    .option(
      '--out <dir>',
      'directory for sweep directories (a sweep of this file left running there by a stopped coordinator is taken up at its stage)',
      'sweeps',
    )
    .action(async (file: string, o: RunFlags & { out: string }) => {
      process.exitCode = await sweep(file, o);
    });
}

async function sweep(file: string, o: RunFlags & { out: string }): Promise<number> {
  // Every problem of the sweep file and its plan is reported here, before any load.
  const fromFile = await loadSweepFile(file);
  const loaded = { ...fromFile, plan: withCostFlags(fromFile.plan, o) };
  const flags = await runOptionsFromFlags(o);
  // Stage verdicts are the sweep's own output: shown even with --quiet.
  const say = (line: string): void => void process.stderr.write(`[sweep] ${line}\n`);
  // The same command restarted on the same --out (a container restart) takes up the sweep it had
  // not finished instead of starting another beside it.
  const unfinished = await unfinishedSweep(o.out, loaded, file);
  if (unfinished) say(`${unfinished} was not finished (its coordinator is gone): taking it up at the stage it was in`);
  try {
    const result = await executeSweep(loaded, file, o.out, flags.options, say, unfinished);
    const d = result.doc as { capacity: number | null; bracket: [number | null, number | null]; unit: string; answer: string };
    process.stdout.write(
      `sweep ${result.dir}: capacity ${d.capacity ?? '-'} ${d.unit}, bracket [${d.bracket[0] ?? '-'}, ${d.bracket[1] ?? '-'}]\n${d.answer}\n`,
    );
    return sweepExitCode(result.doc);
  } finally {
    await flags.close();
  }
}
