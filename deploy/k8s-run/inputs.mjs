// The run's input files: the plan, or a sweep/experiment file and the plan it names. They become
// the plan ConfigMap (plan.json, and sweep.json or experiment.json whose "plan" then names
// plan.json), and what they say is checked against the command line before anything is applied.
// With the repository built (dist/), the files are validated exactly as the coordinator will.
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { JOIN_TIMEOUT_S, UsageError } from './options.mjs';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '../..');

async function parse(path) {
  const text = readFileSync(path, 'utf8').replace(/^\uFEFF/, '');
  if (!/\.ya?ml$/i.test(path) && /^\s*[{[]/.test(text)) {
    try {
      return { text, value: JSON.parse(text), yaml: false };
    } catch (err) {
      throw new UsageError(`${path}: ${err.message}`);
    }
  }
  const yaml = await import('yaml').catch(() => undefined);
  if (!yaml) throw new UsageError(`${path}: YAML needs the repository's node_modules (npm ci); or give the file as JSON`);
  return { text, value: yaml.parse(text), yaml: true, doc: yaml.parseDocument(text) };
}

/** The coordinator's own loaders from dist/, when the repository is built; else undefined. */
async function loaders() {
  const dist = join(ROOT, 'dist/shared');
  if (!existsSync(join(dist, 'sweep-load.js'))) return undefined;
  const [plan, sweep, experiment] = await Promise.all(
    ['plan-load.js', 'sweep-load.js', 'experiment-load.js'].map((f) => import(join(dist, f))),
  );
  return { plan: plan.loadPlanFile, sweep: sweep.loadSweepFile, experiment: experiment.loadExperimentFile };
}

/**
 * Reads and checks the input. Returns the ConfigMap's files ({ name: text }), the target URL, the
 * plan's length, and whether the coordinator's validation ran.
 */
export async function readInputs(o) {
  const inputPath = resolve(o.input);
  if (!existsSync(inputPath)) throw new UsageError(`--${o.mode} ${o.input}: no such file`);
  const files = {};
  let planPath = inputPath;
  let validated = false;
  const load = await loaders();
  if (load) {
    try {
      await load[o.mode](inputPath);
      validated = true;
    } catch (err) {
      throw new UsageError([`${o.input} is not a valid ${o.mode}: ${err.message}`, ...(err.details ?? []).map((d) => `  ${d}`)].join('\n'));
    }
  }
  if (o.mode !== 'plan') {
    const outer = await parse(inputPath);
    const named = outer.value?.plan;
    if (typeof named !== 'string') throw new UsageError(`${o.input}: a ${o.mode} file names its plan in "plan"`);
    planPath = resolve(dirname(inputPath), named);
    if (!existsSync(planPath)) throw new UsageError(`${o.input} names the plan ${named}, which is not at ${planPath}`);
    // In the ConfigMap the plan is plan.json beside the file.
    if (outer.yaml) {
      outer.doc.set('plan', 'plan.json');
      files[`${o.mode}.json`] = outer.doc.toString();
    } else files[`${o.mode}.json`] = `${JSON.stringify({ ...outer.value, plan: 'plan.json' }, null, 2)}\n`;
  }
  const plan = await parse(planPath);
  files['plan.json'] = plan.text;
  const baseUrl = plan.value?.target?.base_url;
  if (typeof baseUrl !== 'string') throw new UsageError(`${basename(planPath)}: the plan has no target.base_url`);
  let target;
  try {
    target = new URL(baseUrl);
  } catch {
    throw new UsageError(`${basename(planPath)}: target.base_url '${baseUrl}' is not a URL`);
  }
  if (/(^|\.)change-me(\.|$)/.test(target.hostname) || plan.value?.target?.model === 'change-me')
    throw new UsageError(`${basename(planPath)}: the target is still 'change-me': set target.base_url and target.model`);
  const planS = (Number(plan.value?.duration_s) || 0) + (Number(plan.value?.drain_timeout_s) || 0);
  if (o.mode === 'plan' && o.deadlineS < JOIN_TIMEOUT_S + planS)
    throw new UsageError(
      `--deadline ${o.deadlineS} s is shorter than the join timeout (${JOIN_TIMEOUT_S} s) plus the plan's duration and drain (${planS} s): the Jobs would be killed mid-run`,
    );
  const size = Object.values(files).reduce((n, t) => n + Buffer.byteLength(t), 0);
  if (size > 900 * 1024)
    throw new UsageError(
      `the input files are ${Math.round(size / 1024)} KiB, too much for a ConfigMap (1 MiB): put traces and datasets on --workload-claim`,
    );
  const portOf = (u) => Number(u.port) || (u.protocol === 'https:' ? 443 : 80);
  // The plan's scrape sources are reached through the same target rule (same server, other port).
  const scrapeUrls = (Array.isArray(plan.value?.scrape) ? plan.value.scrape : [])
    .map((s) => URL.canParse?.(s?.url) && new URL(s.url))
    .filter(Boolean);
  return { files, target, targetPort: portOf(target), scrapeUrls, scrapePorts: scrapeUrls.map(portOf), planS, validated };
}
