// `node dist/sim/fit-main.js PLAN...`: prints the offline fit of each plan's two arms (the first class
// alone, then every class) so a profile change can be judged in seconds. Options for the pool can
// be given as JSON: `--options '{"kvCacheTokens": 3000000}'`.
import { type ArmResult, runArm, type WindowStats } from './fit.js';
import type { SimOptions } from './options.js';
import { readScenario } from './scenario.js';

function main(argv: string[]): void {
  const at = argv.indexOf('--options');
  const options = at >= 0 ? (JSON.parse(argv[at + 1] ?? '{}') as SimOptions) : {};
  const plans = at >= 0 ? argv.filter((_, i) => i !== at && i !== at + 1) : argv;
  for (const path of plans) {
    const scenario = readScenario(path);
    const [first] = scenario.classes;
    if (!first) continue;
    const alone = runArm(scenario, [first.name], options);
    const together = runArm(
      scenario,
      scenario.classes.map((c) => c.name),
      options,
    );
    process.stdout.write(`\n${scenario.name} (${path})\n`);
    print(`${first.name} only`, alone);
    print('all classes', together);
    const window = scenario.windows.find((w) => w.name === 'surge')?.name ?? 'all';
    const ratio = together.stats[first.name]![window]!.ttftP95Ms / alone.stats[first.name]![window]!.ttftP95Ms;
    process.stdout.write(`  ${first.name} ${window} p95 TTFT ratio: ${ratio.toFixed(1)}x\n`);
  }
}

function print(arm: string, r: ArmResult): void {
  process.stdout.write(`  ${arm}: completed ${r.completed}, rejected ${r.rejected}; peaks ${JSON.stringify(round(r.peaks))}\n`);
  for (const [cls, windows] of Object.entries(r.stats)) {
    for (const [w, s] of Object.entries(windows)) {
      process.stdout.write(`    ${cls.padEnd(10)} ${w.padEnd(9)} n=${String(s.requests).padEnd(4)} ${fmt(s)}\n`);
    }
  }
}

function fmt(s: WindowStats): string {
  return `p95 ttft ${s.ttftP95Ms.toFixed(1)} ms, tpot ${s.tpotP95Ms.toFixed(2)} ms, e2e ${s.e2eP95Ms.toFixed(0)} ms (max ${s.e2eMaxMs.toFixed(0)}); gateway queue mean ${s.queueMeanMs.toFixed(1)} ms`;
}

function round(o: object): object {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Math.round((v as number) * 1000) / 1000]));
}

main(process.argv.slice(2));
