#!/usr/bin/env node
// `loadfleet doctor URL` and `loadfleet init URL`: a few bounded requests to an OpenAI-compatible
// endpoint, a report of what it is and what loadfleet will do with it, and (init, or doctor
// --write-plan) a starter plan for it that validates against the published schema.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { ErrorCode, ExitCode, exitCodeOf, formatError, LoadfleetError, PlanInvalidError } from '../../shared/errors.js';
import { validatePlan } from '../../shared/plan-validate.js';
import { VERSION } from '../../shared/version.js';
import { COMMAND } from '../cli-help.js';
import { DEFAULT_PLAN_FILE } from '../default-plan.js';
import { classify, type DoctorReport } from './classify.js';
import { formatReport } from './format.js';
import { DOCTOR_MAX_REQUESTS, observe } from './probes.js';
import { runCommand, type StarterOptions, starterJson, starterPlan, starterYaml } from './starter-plan.js';

interface DoctorFlags {
  model?: string;
  apiKeyEnv?: string;
  metrics: string[];
  timeoutS: number;
  json?: boolean;
  writePlan?: string;
  rate: number;
  durationS: number;
  force?: boolean;
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return n;
}

function envName(value: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(value))
    throw new InvalidArgumentError('must be an environment variable name (the key itself never goes on a command line)');
  return value;
}

/** The OpenAI base URL: `/v1` added to a bare host, trailing slashes dropped, no credentials. */
export function baseUrlOf(input: string): string {
  const usage = (why: string) => new LoadfleetError(ErrorCode.USAGE, `${input}: ${why}`, { exitCode: ExitCode.INVALID_INPUT });
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw usage('not a URL (e.g. http://localhost:8000/v1)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usage('must be http:// or https:// (e.g. http://localhost:8000/v1)');
  if (url.username || url.password) throw usage('must not carry credentials: use --api-key-env');
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path === '' ? '/v1' : path}`;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

async function diagnose(url: string, o: DoctorFlags): Promise<DoctorReport> {
  const timeoutMs = o.timeoutS * 1000;
  const obs = await observe({
    baseUrl: baseUrlOf(url),
    ...(o.model !== undefined && { model: o.model }),
    ...(o.apiKeyEnv !== undefined && { apiKeyEnv: o.apiKeyEnv }),
    metricsUrls: o.metrics,
    headers: {},
    timeoutMs,
  });
  return classify(obs, timeoutMs);
}

/** Writes the starter plan, validated first; returns the lines to print. */
async function writePlan(report: DoctorReport, file: string, o: DoctorFlags): Promise<string[]> {
  if (existsSync(file) && !o.force)
    throw new LoadfleetError(ErrorCode.USAGE, `${file} exists: choose another name, or --force to overwrite it`, {
      exitCode: ExitCode.INVALID_INPUT,
    });
  const schemaFile = join(dirname(DEFAULT_PLAN_FILE), 'schemas', 'loadfleet.plan.v1.schema.json');
  const rel = relative(dirname(resolve(file)), schemaFile);
  const options: StarterOptions = {
    rate: o.rate,
    durationS: o.durationS,
    ...(o.apiKeyEnv !== undefined && { apiKeyEnv: o.apiKeyEnv }),
    command: COMMAND,
    planPath: file,
    schemaRef: rel.startsWith('.') ? rel : `./${rel}`,
  };
  const plan = starterPlan(report, options);
  // A starter plan that did not validate would be the worst first impression: never write one.
  const checked = validatePlan(plan);
  if (!checked.ok) throw new PlanInvalidError(checked.problems, 'the starter plan');
  await writeFile(file, /\.json$/i.test(file) ? starterJson(plan, options) : starterYaml(plan, report, options));
  return [
    `wrote ${file}: realtime ${o.rate} req/s + batch, ${o.durationS} s, against ${report.model}. Edit it, then run:`,
    `  ${runCommand(options)}`,
  ];
}

async function doctor(url: string, o: DoctorFlags, planFile?: string): Promise<number> {
  const report = await diagnose(url, o);
  const out = o.json ? [JSON.stringify(report, null, 2)] : formatReport(report);
  if (report.loadable && planFile !== undefined) {
    const lines = await writePlan(report, planFile, o);
    if (o.json) process.stderr.write(`${lines.join('\n')}\n`);
    else out.push(...lines);
  } else if (report.loadable && !o.json)
    out.push(
      `next: ${COMMAND} init ${report.base_url}${o.model ? ` --model ${o.model}` : ''}${o.apiKeyEnv ? ` --api-key-env ${o.apiKeyEnv}` : ''} --rate 1   (writes a starter plan)`,
    );
  process.stdout.write(`${out.join('\n')}\n`);
  if (!report.loadable && planFile !== undefined) process.stderr.write(`no plan written: the endpoint cannot be loaded\n`);
  return report.loadable ? ExitCode.OK : ExitCode.FAILURE;
}

function probeOptions(c: Command): Command {
  return c
    .argument('<url>', 'the OpenAI base URL (http://host:8000/v1; /v1 is added to a bare host)')
    .option('--model <name>', 'the model to ask for (default: the first one /models lists)')
    .option('--api-key-env <VAR>', 'environment variable holding the API key, sent as a Bearer token', envName)
    .option('--metrics <url>', 'a further Prometheus endpoint to look at, e.g. a gateway EPP (repeatable)', collect, [])
    .option('--timeout-s <s>', 'seconds each request may take', positive, 15)
    .option('--rate <req/s>', "the starter plan's realtime rate (batch runs at 2.75/3 of it)", positive, 1)
    .option('--duration-s <s>', "the starter plan's duration (the seed's shape is fitted into it)", positive, 60)
    .option('--force', 'overwrite an existing plan file');
}

const program = new Command('loadfleet').version(VERSION).exitOverride();

probeOptions(
  program
    .command('doctor')
    .version(VERSION)
    .description(
      `a few small requests (at most ${DOCTOR_MAX_REQUESTS}, plus one per --metrics URL, each bounded by --timeout-s) to an OpenAI-compatible endpoint, then what it is and what loadfleet will do with it; exit 1 when it cannot be loaded`,
    ),
)
  .option('--json', 'print the report as JSON (loadfleet.doctor/v1)')
  .option('--write-plan <file>', 'also write a starter plan for it (.yaml with comments, or .json)')
  .addHelpText(
    'after',
    `
Examples:
  ${COMMAND} doctor http://localhost:8000/v1
  ${COMMAND} doctor https://api.example.com/v1 --model my-model --api-key-env MY_API_KEY --json
  ${COMMAND} doctor http://gateway:80/v1 --metrics http://epp:9090/metrics --write-plan plan.yaml --rate 2`,
  )
  .action(async (url: string, o: DoctorFlags) => {
    process.exitCode = await doctor(url, o, o.writePlan);
  });

probeOptions(
  program
    .command('init')
    .description('run the doctor, then write a starter plan for the endpoint (realtime + batch, the seed study shape)'),
)
  .option('--out <file>', 'the plan file to write (.yaml with comments, or .json)', 'loadfleet.plan.yaml')
  .option('--json', 'print the doctor report as JSON')
  .addHelpText(
    'after',
    `
Examples:
  ${COMMAND} init http://localhost:8000/v1 --rate 2
  ${COMMAND} init http://localhost:8080 --out llama.plan.json --duration-s 120
  ${COMMAND} coordinator start --plan loadfleet.plan.yaml --agents 2     # then run it`,
  )
  .action(async (url: string, o: DoctorFlags & { out: string }) => {
    process.exitCode = await doctor(url, o, o.out);
  });

try {
  await program.parseAsync();
} catch (err) {
  const code = (err as { code?: string }).code?.startsWith('commander.') ? (err as { exitCode: number }).exitCode : undefined;
  if (code !== undefined) process.exitCode = code === 0 ? ExitCode.OK : ExitCode.INVALID_INPUT;
  else {
    process.stderr.write(`${formatError(err)}\n`);
    process.exitCode = exitCodeOf(err);
  }
}
process.exit(process.exitCode ?? 0);
