// Offline checks of deploy/: every kustomization renders with `kubectl kustomize`, every object
// validates against the Kubernetes schemas, and what a cluster run depends on holds (one agent
// per node, Indexed agents, no retries, the token only from a Secret, pinned images, one agent
// count). The Dockerfile is linted and the image's entry point is run for real.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Pod } from 'kubernetes-models/v1/Pod';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadExperimentFile } from '../shared/experiment-load.js';
import { validatePlan } from '../shared/plan-validate.js';
import { loadSweepFile } from '../shared/sweep-load.js';
import { tempDir } from './harness.js';
import { skipFor } from './require.js';

const DEPLOY = fileURLToPath(new URL('../deploy/', import.meta.url));
const KUBECTL = process.env['KUBECTL'] ?? 'kubectl';
const HAS_KUBECTL = spawnSync(KUBECTL, ['version', '--client'], { stdio: 'ignore' }).status === 0;
const COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']";
/** Image UID of deploy/Dockerfile's USER; the pods' runAsUser must match it. */
const IMAGE_UID = 10001;

type Validator = (obj: unknown) => { validate(): void };
const model =
  <D>(Ctor: new (data: D) => { validate(): void }): Validator =>
  (obj) =>
    new Ctor(obj as D);
// Every kind the manifests may contain; any other kind fails the test.
const MODELS: Record<string, Validator> = {
  'apps/v1 Deployment': model(Deployment),
  'batch/v1 Job': model(Job),
  'v1 ConfigMap': model(ConfigMap),
  'v1 PersistentVolumeClaim': model(PersistentVolumeClaim),
  'v1 Pod': model(Pod),
  'v1 Service': model(Service),
};

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
}

const runKustomizations = ['base', ...readdirSync(join(DEPLOY, 'k8s/overlays')).map((o) => `overlays/${o}`)];
const rendered = new Map<string, K8sObject[]>();

function render(dir: string): K8sObject[] {
  let objects = rendered.get(dir);
  if (!objects) {
    const out = spawnSync(KUBECTL, ['kustomize', join(DEPLOY, 'k8s', dir)], { encoding: 'utf8' });
    if (out.status !== 0) throw new Error(`kubectl kustomize ${dir} failed:\n${out.stderr}`);
    objects = parseAllDocuments(out.stdout).map((d) => d.toJS() as K8sObject);
    rendered.set(dir, objects);
  }
  return objects;
}

const ofKind = <T>(objects: K8sObject[], is: (v: unknown) => v is T): (T & K8sObject)[] => objects.filter((o): o is T & K8sObject => is(o));
const jobs = (objects: K8sObject[], component: string) =>
  ofKind(objects, Job.is).filter((j) => j.metadata?.labels?.['app.kubernetes.io/component'] === component);
const named = <T extends K8sObject>(objects: T[], name: string): T | undefined => objects.find((o) => o.metadata.name === name);

function podSpecs(objects: K8sObject[]): IPodSpec[] {
  const templated = [...ofKind(objects, Job.is), ...ofKind(objects, Deployment.is)].map((o) => o.spec?.template.spec);
  return [...templated, ...ofKind(objects, Pod.is).map((p) => p.spec)].filter((s) => s !== undefined);
}
const containersOf = (spec: IPodSpec): IContainer[] => [...(spec.initContainers ?? []), ...spec.containers];
const allContainers = (objects: K8sObject[]): IContainer[] => podSpecs(objects).flatMap(containersOf);

/** The value of `--name=VALUE` in a container's args, with `$(VAR)` references to plain env values expanded. */
function flag(c: IContainer, name: string): string | undefined {
  const arg = c.args?.find((a) => a.startsWith(`--${name}=`));
  const env = new Map((c.env ?? []).map((e) => [e.name, e.value]));
  return arg?.slice(name.length + 3).replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (ref, v: string) => env.get(v) ?? ref);
}

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean =>
  selector !== undefined && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** The coordinator's subcommand: `start` (one run) or `sweep` / `experiment` (a fleet that serves many). */
const commandOf = (objects: K8sObject[]): string =>
  onlyOne(jobs(objects, 'coordinator'), 'coordinator Jobs').spec!.template.spec!.containers[0]!.args?.[1] ?? '';

function onlyOne<T>(items: T[], what: string): T {
  expect(items, what).toHaveLength(1);
  return items[0]!;
}

describe.skipIf(skipFor('the Kubernetes render tests', HAS_KUBECTL ? null : 'kubectl not found (install it, or set $KUBECTL)'))(
  'deploy/k8s',
  () => {
    it.each([...runKustomizations, 'results-reader'])('%s renders and every object validates against the Kubernetes schemas', (dir) => {
      for (const obj of render(dir)) {
        const make = MODELS[`${obj.apiVersion} ${obj.kind}`];
        expect(make, `${obj.kind} ${obj.metadata.name}: no schema for ${obj.apiVersion} ${obj.kind}`).toBeDefined();
        expect(() => make!(obj).validate(), `${obj.kind} ${obj.metadata.name}`).not.toThrow();
      }
    });

    it.each([...runKustomizations, 'results-reader'])(
      '%s: pinned images, requests and limits, token only from a Secret, non-root',
      (dir) => {
        const objects = render(dir);
        expect(
          objects.filter((o) => o.kind === 'Secret'),
          'no Secret is shipped: the token is created with kubectl',
        ).toEqual([]);
        for (const c of allContainers(objects)) {
          expect(c.image, c.name).toMatch(/^[a-z0-9.-]+(:\d+)?\/[a-z0-9._/-]+(:[\w][\w.-]{0,127}|@sha256:[0-9a-f]{64})$/);
          expect(c.image, c.name).not.toMatch(/:latest$/);
          for (const kind of ['requests', 'limits'] as const)
            expect(Object.keys(c.resources?.[kind] ?? {}).sort(), `${c.name} ${kind}`).toEqual(['cpu', 'memory']);
          for (const e of c.env ?? []) {
            if (e.name === 'LOADFLEET_TOKEN')
              expect(e.valueFrom?.secretKeyRef, `${c.name}: LOADFLEET_TOKEN`).toEqual({ name: 'loadfleet-token', key: 'token' });
            if (/TOKEN|SECRET|PASSWORD|API_KEY/i.test(e.name))
              expect(e.value, `${c.name}: ${e.name} must come from a Secret`).toBeUndefined();
          }
          expect(
            [...(c.command ?? []), ...(c.args ?? [])].filter((a) => a.startsWith('--token')),
            `${c.name}: no token in args`,
          ).toEqual([]);
        }
        for (const spec of podSpecs(objects)) expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: IMAGE_UID });
      },
    );

    it.each(runKustomizations)(
      '%s: agents are an Indexed Job, one per node, id from the completion index; restarted only to rejoin a fleet',
      (dir) => {
        const objects = render(dir);
        const agentJobs = jobs(objects, 'agent');
        // One run: a replaced agent would change the load mid-run. A sweep or experiment: a restarted
        // agent (same pod, same index, same id) rejoins before the next run or hands over its spool.
        const fleet = commandOf(objects) !== 'start';
        expect(agentJobs.length).toBeGreaterThan(0);
        for (const job of agentJobs) {
          const spec = job.spec!;
          const pod = spec.template.spec!;
          const labels = spec.template.metadata?.labels;
          expect(spec).toMatchObject({ completionMode: 'Indexed' });
          expect(spec.backoffLimit === 0).toBe(!fleet);
          expect(spec.parallelism).toBe(spec.completions);
          expect(pod.restartPolicy).toBe(fleet ? 'OnFailure' : 'Never');
          const required = pod.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
          expect(required.some((t) => t.topologyKey === 'kubernetes.io/hostname' && matches(t.labelSelector?.matchLabels, labels))).toBe(
            true,
          );
          expect(pod.topologySpreadConstraints?.some((t) => matches(t.labelSelector?.matchLabels, labels))).toBe(true);
          const agent = onlyOne(pod.containers, 'agent containers');
          const indexVar = agent.env?.find((e) => e.valueFrom?.fieldRef?.fieldPath === COMPLETION_INDEX)?.name;
          expect(indexVar, 'an env var holds the completion index').toBeDefined();
          expect(agent.args?.find((a) => a.startsWith('--id='))).toContain(`$(${indexVar})`);
          expect(
            agent.env?.find((e) => e.name === 'LOADFLEET_CLOCK_DOMAIN')?.value,
            'LOADFLEET_CLOCK_DOMAIN is set (possibly empty)',
          ).toBeTypeOf('string');
        }
      },
    );

    it.each(runKustomizations)('%s: the coordinator waits for exactly the agents the Jobs start, behind its Service', (dir) => {
      const objects = render(dir);
      const job = onlyOne(jobs(objects, 'coordinator'), 'coordinator Jobs');
      const pod = job.spec!.template.spec!;
      const coordinator = onlyOne(pod.containers, 'coordinator containers');
      expect(job.spec?.backoffLimit).toBe(0);
      expect(pod.restartPolicy).toBe('Never');
      const agentJobs = jobs(objects, 'agent');
      const started = agentJobs.reduce((n, j) => n + (j.spec?.completions ?? 0), 0);
      expect(Number(flag(coordinator, 'agents'))).toBe(started);
      if (dir === 'overlays/agents-8') expect(started).toBe(8);

      const listenPort = Number(flag(coordinator, 'listen')?.split(':').pop());
      expect(coordinator.env?.map((e) => e.name)).toContain('LOADFLEET_TOKEN');
      for (const agent of agentJobs.flatMap((j) => j.spec!.template.spec!.containers)) {
        expect(agent.env?.map((e) => e.name)).toContain('LOADFLEET_TOKEN');
        const url = new URL(flag(agent, 'coordinator') ?? '');
        const service = named(ofKind(objects, Service.is), url.hostname);
        expect(service, `Service ${url.hostname}`).toBeDefined();
        expect(matches(service?.spec?.selector, job.spec?.template.metadata?.labels)).toBe(true);
        const port = service?.spec?.ports?.find((p) => p.port === Number(url.port));
        expect(port?.name).toBe('agents');
        expect(coordinator.ports?.find((p) => p.name === port?.targetPort)?.containerPort).toBe(listenPort);
      }
    });

    it.each(runKustomizations)('%s: results go to a PVC at /results and the plan comes from a valid ConfigMap', async (dir) => {
      const objects = render(dir);
      const pod = onlyOne(jobs(objects, 'coordinator'), 'coordinator Jobs').spec!.template.spec!;
      const coordinator = pod.containers[0]!;
      const mountAt = (path: string) =>
        pod.volumes?.find((v) => v.name === coordinator.volumeMounts?.find((m) => m.mountPath === path)?.name);
      expect(flag(coordinator, 'out')).toBe('/results');
      const claim = mountAt('/results')?.persistentVolumeClaim?.claimName ?? '';
      expect(named(ofKind(objects, PersistentVolumeClaim.is), claim), `PVC ${claim}`).toBeDefined();

      // `start --plan=FILE`, or `sweep FILE` / `experiment FILE` whose "plan" sits beside it.
      const command = commandOf(objects);
      const inputPath = command === 'start' ? (flag(coordinator, 'plan') ?? '') : (coordinator.args?.[2] ?? '');
      const mount = coordinator.volumeMounts?.find((m) => inputPath.startsWith(`${m.mountPath}/`));
      const configMapName = pod.volumes?.find((v) => v.name === mount?.name)?.configMap?.name ?? '';
      const configMap = named(ofKind(objects, ConfigMap.is), configMapName);
      const inputName = inputPath.slice((mount?.mountPath.length ?? 0) + 1);
      expect(configMap?.data?.[inputName], `${inputPath} in ConfigMap ${configMapName}`).toBeTypeOf('string');
      let planPath = inputPath;
      if (command !== 'start') {
        // Validated whole, as the coordinator would before any load: the file and the plan it names.
        const files = tempDir('loadfleet-deploy-input-');
        for (const [name, content] of Object.entries(configMap?.data ?? {})) writeFileSync(join(files, name), content);
        const load = command === 'sweep' ? loadSweepFile : loadExperimentFile;
        const loaded = await load(join(files, inputName));
        planPath = join(mount?.mountPath ?? '', String((JSON.parse(configMap!.data![inputName]!) as { plan: string }).plan));
        expect(loaded).toBeTruthy();
      }
      const text = configMap?.data?.[planPath.slice((mount?.mountPath.length ?? 0) + 1)];
      expect(text, `plan ${planPath} in ConfigMap ${configMapName}`).toBeTypeOf('string');
      const plan = JSON.parse(text!) as { schema: string; target?: { base_url: string; model: string } };
      expect(plan.schema).toBe('loadfleet.plan/v1');
      expect(validatePlan(plan)).toMatchObject({ ok: true });
      // The in-cluster engine-sim must be what the plan targets, serving the model the plan asks for.
      const sim = ofKind(objects, Deployment.is).find((d) => d.metadata?.name === 'engine-sim');
      expect(sim !== undefined, 'engine-sim Deployment').toBe(dir === 'overlays/engine-sim');
      if (sim) {
        const target = new URL(plan.target?.base_url ?? '');
        const service = named(ofKind(objects, Service.is), target.hostname);
        expect(service?.spec?.ports?.some((p) => p.port === Number(target.port))).toBe(true);
        expect(matches(service?.spec?.selector, sim.spec?.template.metadata?.labels)).toBe(true);
        expect(flag(sim.spec!.template.spec!.containers[0]!, 'model')).toBe(plan.target?.model);
      }
    });
  },
);

describe('deploy/Dockerfile', () => {
  const dockerfile = readFileSync(join(DEPLOY, 'Dockerfile'), 'utf8');
  const lines = dockerfile.split('\n').filter((l) => !l.trimStart().startsWith('#'));
  const instructions = (name: string) => lines.filter((l) => l.startsWith(`${name} `)).map((l) => l.slice(name.length + 1).trim());

  it('is multi-stage on a pinned base image, installs only production dependencies and runs as a non-root user', () => {
    expect(dockerfile).not.toMatch(/:latest\b/);
    const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
    expect(base).toMatch(/^node:\d+\.\d+\.\d+-[a-z]+(-slim)?$/);
    const froms = instructions('FROM');
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const f of froms) expect(f).toMatch(/^\$\{NODE_IMAGE\} AS [a-z]+$/);
    expect(dockerfile).toContain('npm run build');
    expect(dockerfile).toMatch(/npm ci --omit=dev --ignore-scripts/);
    expect(dockerfile).toContain('COPY --from=build /src/dist ./dist');
    expect(instructions('USER').at(-1)).toBe(`${IMAGE_UID}:${IMAGE_UID}`);
    expect(instructions('ENTRYPOINT').at(-1)).toBe('["/app/deploy/bin/loadfleet"]');
  });

  it('copies only what its .dockerignore lets into the build context', () => {
    const allowed = readFileSync(join(DEPLOY, 'Dockerfile.dockerignore'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1).replace(/\/$/, ''));
    const sources = instructions('COPY')
      .filter((c) => !c.startsWith('--from'))
      .flatMap((c) =>
        c
          .replace(/^--\S+\s+/, '')
          .split(/\s+/)
          .slice(0, -1),
      );
    expect(sources.length).toBeGreaterThan(0);
    for (const s of sources) expect(allowed, s).toContain(s.replace(/^\.\//, '').replace(/\/$/, ''));
  });
});

describe('deploy/bin/loadfleet (the image entry point)', () => {
  const entry = join(DEPLOY, 'bin/loadfleet');
  // A fake install whose entry points print the arguments they were given.
  const home = tempDir('loadfleet-deploy-');
  for (const dir of ['agent', 'coordinator', 'sim']) {
    mkdirSync(join(home, 'dist', dir), { recursive: true });
    writeFileSync(join(home, 'dist', dir, 'main.js'), `console.log(JSON.stringify(['${dir}', ...process.argv.slice(2)]));\n`);
  }
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(entry, args, { encoding: 'utf8', env: { ...process.env, LOADFLEET_CLOCK_DOMAIN: '', ...env, LOADFLEET_HOME: home } });

  it('is executable and dispatches to each entry point', () => {
    accessSync(entry, constants.X_OK);
    expect(JSON.parse(run(['coordinator', 'start', '--agents=2']).stdout)).toEqual(['coordinator', 'start', '--agents=2']);
    expect(JSON.parse(run(['engine-sim', '--port=8000']).stdout)).toEqual(['sim', '--port=8000']);
    expect(JSON.parse(run(['agent', '--id=a-0']).stdout)).toEqual(['agent', '--id=a-0']);
    expect(run(['bogus']).status).toBe(2);
  });

  it('dispatches doctor and init to one program, keeping the command name; answers --version from the install', () => {
    mkdirSync(join(home, 'dist', 'coordinator', 'doctor'), { recursive: true });
    writeFileSync(join(home, 'dist', 'coordinator', 'doctor', 'main.js'), `console.log(JSON.stringify(process.argv.slice(2)));\n`);
    writeFileSync(join(home, 'package.json'), JSON.stringify({ name: 'loadfleet', version: '9.8.7' }));
    expect(JSON.parse(run(['doctor', 'http://h/v1', '--json']).stdout)).toEqual(['doctor', 'http://h/v1', '--json']);
    expect(JSON.parse(run(['init', 'http://h/v1']).stdout)).toEqual(['init', 'http://h/v1']);
    expect(run(['--version']).stdout).toBe('9.8.7\n');
  });

  it('turns a non-empty LOADFLEET_CLOCK_DOMAIN into --clock-domain for agents only, before explicit arguments', () => {
    const env = { LOADFLEET_CLOCK_DOMAIN: 'ptp:rack-a' };
    expect(JSON.parse(run(['agent', '--id=a-0'], env).stdout)).toEqual(['agent', '--clock-domain', 'ptp:rack-a', '--id=a-0']);
    expect(JSON.parse(run(['coordinator', 'start'], env).stdout)).toEqual(['coordinator', 'start']);
  });
});
