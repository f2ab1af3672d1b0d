// `--version` on every coordinator command and examples under each one's --help, applied once
// after all commands are defined so a command added later gets the version too.
import type { Command } from 'commander';
import { VERSION } from '../shared/version.js';

/** How the user typed loadfleet (the bin script says; `./loadfleet` in a clone). */
export const COMMAND = process.env.LOADFLEET_ARGV0 ?? 'loadfleet';

const C = `${COMMAND} coordinator`;

/** Examples per coordinator subcommand, shown after its options. */
const EXAMPLES: Record<string, string[]> = {
  start: [
    `${C} start --agents 8          # the built-in plan against the built-in engine-sim`,
    `${C} start --plan loadfleet.plan.yaml --agents 2 --fail-on-slo`,
    `${C} start --plan plan.json --listen 0.0.0.0:7000 --agents 4          # agents join from other machines`,
    `${C} start --agents 2 --sim-arg=--ttft-ms=80          # a flag for the embedded engine-sim`,
  ],
  experiment: [
    `${C} experiment examples/batch-interference-short.experiment.json --agents 4`,
    `${C} experiment my.experiment.json --resume          # continue the newest interrupted one`,
  ],
  resume: [
    `${C} resume runs/<run_id>          # a run whose coordinator was killed: its agents rejoin within their grace`,
    `${C} resume runs/<run_id> --listen 0.0.0.0:7000          # listen elsewhere than the stopped coordinator did`,
  ],
  sweep: [
    `${C} sweep examples/saturation-short.sweep.json --agents 2`,
    `${C} sweep my.sweep.json --listen 0.0.0.0:7000 --out sweeps          # the same command again after a crash takes the sweep up at its stage`,
  ],
  analyze: [`${C} analyze experiments/<dir>`, `${C} analyze runs/<a> runs/<b> --experiment my.experiment.json --out analysis.json`],
  report: [`${C} report runs/<run_id>`, `${C} report experiments/<dir>`],
  plan: [`${C} plan examples/batch-interference-short.plan.json --agents 8          # a dry run: no load, no target`],
  upload: [`${C} upload runs/<run_id> s3://bucket/loadfleet          # credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY`],
};

/** Adds --version to `program` and every subcommand, and each subcommand's examples to its help. */
export function addVersionAndExamples(program: Command): void {
  program.version(VERSION);
  program.addHelpText('after', `\nExamples:\n  ${EXAMPLES.start![0]}\n  ${C} start --help`);
  for (const cmd of program.commands) {
    cmd.version(VERSION);
    const examples = EXAMPLES[cmd.name()];
    if (examples) cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  ${e}`).join('\n')}`);
  }
}
