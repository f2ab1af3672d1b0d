// `coordinator plan FILE --agents N`: the dry run's I/O — read a plan (or a sweep and its plan),
// get the agents' self-test figures (this host's, measured or cached by an agent process, or from
// a file), print the dry run. Sends nothing to any target unless --probe-target asks.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { Option } from 'commander';
import { AGENT_NODE_FLAGS } from '../../shared/agent-node-flags.js';
import { ErrorCode, ExitCode, LoadfleetError } from '../../shared/errors.js';
import type { Plan } from '../../shared/plan.js';
import { loadPlanFile, parseDocumentText } from '../../shared/plan-load.js';
import type { SelfTestFigures } from '../../shared/self-test.js';
import { parseSelfTest } from '../../shared/self-test.js';
import { SWEEP_SCHEMA } from '../../shared/sweep.js';
import { loadSweepFile } from '../../shared/sweep-load.js';
import { attachWorkloadInputs } from '../../shared/workload-files.js';
import { calibratePlan } from '../calibrate/index.js';
import type { RunFlags } from '../cli-options.js';
import { addHeadroomFlags, headroomFromFlags, positiveInt } from '../cli-options.js';
import { describeHeadroom, fleetSizeText, freeCoresNow } from '../headroom/index.js';
import type { FleetAgent } from '../headroom/rule.js';
import type { LocalLayoutMode } from '../local-layout.js';
import { chooseLocalLayout, LOCAL_LAYOUT_MODES } from '../local-layout.js';
import type { PlanDryRun } from './summary.js';
import { dryRun, sweepStagePlans } from './summary.js';

const AGENT_MAIN = fileURLToPath(new URL('../../agent/main.js', import.meta.url));

type PlanFlags = Pick<
  RunFlags,
  'headroom' | 'headroomMaxElu' | 'headroomMaxSloShare' | 'assumeTtftMs' | 'assumeTokensPerS' | 'freeCores'
> & {
  agents: number;
  workers: number;
  selfTest: 'cached' | 'run' | 'skip';
  agentFigures?: string;
  json?: boolean;
  probeTarget?: boolean;
  local?: boolean;
  localLayout: LocalLayoutMode;
};

/** Adds `plan` to the coordinator's commands. */
export function planCommand(program: Command): void {
  addHeadroomFlags(
    program
      .command('plan')
      .description('dry run: the schedule hash, requests, peak rates and streams per agent, and the fleet size the plan needs; no load')
      .argument('<file>', 'plan file (loadfleet.plan/v1) or sweep file (loadfleet.sweep/v1: every stage it would run)')
      .option('--agents <n>', 'number of agents', positiveInt, 1)
      .option('--workers <n>', 'worker threads per agent (agent --workers)', positiveInt, 1)
      .addOption(
        new Option(
          '--self-test <mode>',
          "this host's agent figures: cached (measure once, then reuse), run (measure now), skip (no headroom)",
        )
          .choices(['cached', 'run', 'skip'])
          .default('cached'),
      )
      .option(
        '--agent-figures <file>',
        "the agents' figures instead: a self-test JSON (agent --self-test-only) or a run.json (its agents' self_test)",
      )
      .option('--local', 'the agents would run on this machine (coordinator start without --listen): they share its free cores')
      .addOption(
        new Option('--local-layout <layout>', 'with --local: the processes they would run in, as `start --local-layout`')
          .choices([...LOCAL_LAYOUT_MODES])
          .default('auto'),
      )
      .option('--probe-target', "also calibrate the prompts on the plan's target as a run would (sends tokenize requests, no load)")
      .option('--json', 'print the dry run as JSON'),
  ).action(async (file: string, o: PlanFlags) => {
    process.exitCode = await planDryRun(file, o);
  });
}

async function planDryRun(file: string, o: PlanFlags): Promise<number> {
  const doc = parseDocumentText(await readFile(file, 'utf8').catch(() => ''), file);
  const isSweep = doc.ok && (doc.value as { schema?: unknown } | null)?.schema === SWEEP_SCHEMA;
  const opts = { ...headroomFromFlags(o), policy: o.headroom === 'off' ? 'warn' : o.headroom };
  const print = (line: string): void => void process.stdout.write(`${line}\n`);
  const freeCores = o.freeCores ?? freeCoresNow();
  // The layout `start` would choose for these local agents (agent-1…, as it names them).
  const layout = o.local ? chooseLocalLayout(o.agents, freeCores, o.workers, o.localLayout) : null;
  const local = layout ? { freeCores, groups: layout.groups } : undefined;
  if (isSweep) {
    const loaded = await loadSweepFile(file);
    const fleet = await fleetFigures(o);
    const { note, stages } = sweepStagePlans(loaded.plan, loaded.sweep);
    const runs = [];
    for (const s of stages)
      runs.push({ stage: runs.length + 1, value: s.value, ...dryRun(await attachWorkloadInputs(s.plan), fleet, opts, local) });
    if (o.json)
      print(
        JSON.stringify(
          { sweep: loaded.sweep.name, class: loaded.sweep.class, scale: loaded.sweep.scale, stages_note: note, stages: runs },
          null,
          2,
        ),
      );
    else {
      print(`sweep ${loaded.sweep.name}: ${loaded.sweep.class} by ${loaded.sweep.scale}, stages: ${note}`);
      for (const r of runs) {
        print('');
        print(`stage ${r.stage} at ${r.value}:`);
        for (const line of describeDryRun(r)) print(`  ${line}`);
      }
    }
    return ExitCode.OK;
  }
  // The plan first: a bad one is reported before any self-test runs.
  const plan = await attachWorkloadInputs(await loadPlanFile(file));
  const fleet = await fleetFigures(o);
  const result = dryRun(plan, fleet, opts, local);
  const calibrated = o.probeTarget ? await probeTarget(plan) : undefined;
  if (o.json) print(JSON.stringify({ ...result, local_layout: layout, ...(calibrated && { calibrated }) }, null, 2));
  else {
    if (layout) print(`local layout: ${layout.chosen}, ${layout.agents} agents in ${layout.processes} process(es): ${layout.why}`);
    for (const line of describeDryRun(result)) print(line);
    if (calibrated) for (const [name, c] of Object.entries(calibrated)) print(`calibrated ${name}: ${JSON.stringify(c)}`);
  }
  return ExitCode.OK;
}

/** The dry run as text lines. */
export function describeDryRun(r: PlanDryRun): string[] {
  const lines = [
    `plan ${r.plan}: ${r.duration_s} s on ${r.agents} agent(s)`,
    `schedule_sha256 ${r.schedule_sha256}`,
    `prompt tokens to send: ${r.prompt_tokens}`,
  ];
  for (const [name, c] of Object.entries(r.classes)) {
    const per = c.requests_per_agent;
    lines.push(
      `class ${name}: ${c.requests} requests (per agent ${Math.min(...per)}–${Math.max(...per)}), ${c.prompt_tokens} prompt tokens, ` +
        `peak ${c.peak_starts_per_s} starts/s, peak ${c.peak_streams} streams open`,
    );
    lines.push(`  calibration: ${c.calibration}`);
  }
  for (const a of r.per_agent)
    lines.push(
      `agent ${a.agent + 1}: ${a.requests} requests, peak ${a.peak_starts_per_s} starts/s, ${a.peak_chunks_per_s} chunks/s, ${a.peak_streams} streams, ${a.prompt_tokens} prompt tokens`,
    );
  if (r.headroom) {
    lines.push(...describeHeadroom(r.headroom));
    lines.push(`fleet size the headroom rule asks for: ${fleetSizeText(r.headroom)}`);
  } else lines.push('headroom: not projected (no self-test figures: --self-test skip)');
  return lines;
}

// N agents like this host's (or those of a run.json, or of a figures file).
async function fleetFigures(o: PlanFlags): Promise<FleetAgent[]> {
  const like = (figures: SelfTestFigures | null): FleetAgent[] =>
    Array.from({ length: o.agents }, (_, i) => ({ id: `agent-${i + 1}`, figures, workers: o.workers }));
  if (o.agentFigures) {
    const v = JSON.parse(await readFile(o.agentFigures, 'utf8')) as {
      agents?: { agent_id: string; self_test: unknown; workers?: number }[];
    };
    const single = parseSelfTest(v);
    if (single) return like(single);
    if (Array.isArray(v.agents)) {
      const all = v.agents.map((a) => ({ id: a.agent_id, figures: parseSelfTest(a.self_test), workers: a.workers ?? 1 }));
      // --agents picks how many; beyond the run's agents, more like its first.
      return Array.from({ length: o.agents }, (_, i) => all[i] ?? { ...all[0]!, id: `agent-${i + 1}` });
    }
    throw new LoadfleetError(ErrorCode.USAGE, `${o.agentFigures} holds neither self-test figures nor a run.json with agents[].self_test`, {
      exitCode: ExitCode.INVALID_INPUT,
    });
  }
  if (o.selfTest === 'skip') return like(null);
  return like(await hostSelfTest(o.selfTest));
}

// An agent process of this build measures (or reuses) this host's figures.
function hostSelfTest(mode: 'cached' | 'run'): Promise<SelfTestFigures | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...AGENT_NODE_FLAGS, AGENT_MAIN, '--self-test-only', '--self-test', mode], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', () => {
      try {
        resolve(parseSelfTest(JSON.parse(out)));
      } catch {
        resolve(null);
      }
    });
  });
}

async function probeTarget(plan: Plan): Promise<Plan['prompt_calibration']> {
  if (!plan.target)
    throw new LoadfleetError(
      ErrorCode.USAGE,
      '--probe-target needs a plan with a target (the embedded engine-sim is started only by a run)',
      {
        exitCode: ExitCode.INVALID_INPUT,
      },
    );
  return (await calibratePlan(plan, 'dry-run', (line) => void process.stderr.write(`${line}\n`))).prompt_calibration;
}
