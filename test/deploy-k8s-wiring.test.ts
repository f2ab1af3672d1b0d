// Offline checks of how a rendered run is wired (deploy-k8s.test.ts has its lifecycle and
// placement): every selector names the run; agents find the coordinator by its Service over TLS
// and pin the run's CA; NetworkPolicies, where on, let agents reach only this run's coordinator,
// DNS (kube-dns and NodeLocal DNSCache) and the target, which an in-cluster server is reached by
// selector; results go to the standing volume; the plan comes from a valid ConfigMap; cert-manager
// and the wrapper each give a run a CA of its own.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { INetworkPolicyPeer } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyPeer';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Pod } from 'kubernetes-models/v1/Pod';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { loadExperimentFile } from '../shared/experiment-load.js';
import { validatePlan } from '../shared/plan-validate.js';
import { loadSweepFile } from '../shared/sweep-load.js';
import {
  baseName,
  commandOf,
  flag,
  forget,
  HAS_KUBECTL,
  jobs,
  type K8sObject,
  matches,
  named,
  ofKind,
  onlyOne,
  podSpecs,
  podTemplateLabels,
  RUN_LABEL,
  render,
  runKustomizations,
  selects,
  WRAPPED_RUN,
} from './deploy-k8s-model.js';
import { tempDir } from './harness.js';
import { skipFor } from './require.js';

/** The renders that turn NetworkPolicies on (an overlay that lists the component, or a wrapper target). */
const WITH_POLICIES = ['overlays/engine-sim', 'run:engine-sim', 'run:sweep-16', 'run:plan-cidr'];
const NODE_LOCAL_DNS = '169.254.20.10';
const METADATA_ADDRESS = '169.254.169.254';
/** Whether an IPv4 address lies in a CIDR. */
function inCidr(ip: string, cidr: string): boolean {
  const n = (a: string) => a.split('.').reduce((v, o) => v * 256 + Number(o), 0);
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(n(ip) / size) === Math.floor(n(base!) / size);
}

describe.skipIf(skipFor('the Kubernetes wiring tests', HAS_KUBECTL ? null : 'kubectl not found (install it, or set $KUBECTL)'))(
  'deploy/k8s wiring',
  () => {
    it.each(runKustomizations)('%s: every selector names the run, and the coordinator is found by its Service over TLS', (dir) => {
      const objects = render(dir);
      const job = onlyOne(jobs(objects, 'coordinator'), 'coordinator Jobs');
      const run = podTemplateLabels(job)[RUN_LABEL];
      expect(run).toBe(dir.startsWith('run:') ? WRAPPED_RUN : 'loadfleet');
      for (const j of jobs(objects, 'agent')) expect(podTemplateLabels(j)[RUN_LABEL]).toBe(run);
      for (const svc of ofKind(objects, Service.is)) expect(svc.spec?.selector?.[RUN_LABEL], svc.metadata?.name).toBe(run);
      for (const pdb of ofKind(objects, PodDisruptionBudget.is)) expect(pdb.spec?.selector?.matchLabels?.[RUN_LABEL]).toBe(run);
      for (const np of ofKind(objects, NetworkPolicy.is)) {
        expect(np.spec?.podSelector?.matchLabels?.[RUN_LABEL], np.metadata?.name).toBe(run);
        const peers = [...(np.spec?.ingress ?? []).flatMap((r) => r.from ?? []), ...(np.spec?.egress ?? []).flatMap((r) => r.to ?? [])];
        // A peer that names loadfleet pods by label names this run's (others use expressions).
        for (const p of peers) if (p.podSelector?.matchLabels) expect(p.podSelector.matchLabels[RUN_LABEL], np.metadata?.name).toBe(run);
      }
      if (dir.startsWith('run:'))
        for (const o of objects) expect(o.metadata.name, `${o.kind} name`).toMatch(new RegExp(`-${WRAPPED_RUN}(-[a-z0-9]{10})?$`));

      const pod = job.spec!.template.spec!;
      const coordinator = onlyOne(pod.containers, 'coordinator containers');
      const agentJobs = jobs(objects, 'agent');
      const started = agentJobs.reduce((n, j) => n + (j.spec?.completions ?? 0), 0);
      expect(Number(flag(coordinator, 'agents'))).toBe(started);
      for (const j of agentJobs) expect(j.spec?.parallelism).toBe(j.spec?.completions);
      if (dir === 'overlays/agents-8') expect(started).toBe(8);

      // The coordinator serves TLS from the run's Secret; agents hold only its CA and verify it.
      const volumeAt = (spec: IPodSpec, c: IContainer, file: string) => {
        const mount = c.volumeMounts?.find((m) => file.startsWith(`${m.mountPath}/`));
        return { volume: spec.volumes?.find((v) => v.name === mount?.name), item: file.slice((mount?.mountPath.length ?? 0) + 1) };
      };
      for (const f of ['tls-cert', 'tls-key']) {
        const { volume, item } = volumeAt(pod, coordinator, flag(coordinator, f) ?? '');
        expect(baseName(volume?.secret?.secretName), f).toBe('loadfleet-tls');
        expect(volume?.secret?.items?.map((i) => i.path)).toContain(item);
      }
      const listenPort = Number(flag(coordinator, 'listen')?.split(':').pop());
      for (const j of agentJobs) {
        const spec = j.spec!.template.spec!;
        const agent = spec.containers[0]!;
        const host = agent.env?.find((e) => e.name === 'LOADFLEET_COORDINATOR_HOST')?.value;
        const url = new URL(flag(agent, 'coordinator') ?? '');
        expect(url.protocol).toBe('wss:');
        const service = named(ofKind(objects, Service.is), host ?? '');
        expect(service, `Service ${host}`).toBeDefined();
        expect(matches(service?.spec?.selector, podTemplateLabels(job))).toBe(true);
        const port = service?.spec?.ports?.find((p) => p.port === Number(url.port));
        expect(port?.name).toBe('agents');
        expect(coordinator.ports?.find((p) => p.name === port?.targetPort)?.containerPort).toBe(listenPort);
        const { volume, item } = volumeAt(spec, agent, flag(agent, 'ca') ?? '');
        expect(baseName(volume?.secret?.secretName)).toBe('loadfleet-tls');
        expect(volume?.secret?.items, 'agents mount the CA and nothing else').toEqual([{ key: 'ca.crt', path: item }]);
        // The target's key reaches both roles (the coordinator calls /tokenize).
        for (const c of [agent, coordinator])
          expect(c.env?.find((e) => e.name === 'OPENAI_API_KEY')?.valueFrom?.secretKeyRef, c.name).toMatchObject({
            name: 'loadfleet-target',
            optional: true,
          });
      }
    });

    it.each(runKustomizations)(
      "%s: network policies: agents reach only the run's coordinator, DNS and the target; only they reach it",
      (dir) => {
        const objects = render(dir);
        const coordinatorJob = onlyOne(jobs(objects, 'coordinator'), 'coordinator Jobs');
        const coordinatorLabels = podTemplateLabels(coordinatorJob);
        const listenPort = Number(flag(coordinatorJob.spec!.template.spec!.containers[0]!, 'listen')?.split(':').pop());
        const policies = ofKind(objects, NetworkPolicy.is);
        // Opt-in: a run renders either no policy or the whole set.
        if (!WITH_POLICIES.includes(dir)) return expect(policies).toEqual([]);
        const kubeDns = (p: INetworkPolicyPeer) =>
          selects(p.namespaceSelector, { 'kubernetes.io/metadata.name': 'kube-system' }) &&
          selects(p.podSelector, { 'k8s-app': 'kube-dns' });
        const nodeLocalDns = (p: INetworkPolicyPeer) => p.ipBlock?.cidr === `${NODE_LOCAL_DNS}/32`;
        // GKE with Cloud DNS puts this resolver in the pods' resolv.conf; on port 53 only (it is the metadata address too).
        const cloudDns = (p: INetworkPolicyPeer) => p.ipBlock?.cidr === `${METADATA_ADDRESS}/32`;
        const dns = (p: INetworkPolicyPeer) => kubeDns(p) || nodeLocalDns(p) || cloudDns(p);
        const otherRun = { ...coordinatorLabels, [RUN_LABEL]: 'another-run' };
        expect(jobs(objects, 'agent').length, 'an agents Job is rendered').toBeGreaterThan(0);
        for (const job of jobs(objects, 'agent')) {
          const agentLabels = podTemplateLabels(job);
          const mine = policies.filter((p) => selects(p.spec?.podSelector, agentLabels));
          expect(
            mine.some((p) => p.spec?.policyTypes?.includes('Ingress')),
            'ingress is restricted',
          ).toBe(true);
          expect(
            mine.flatMap((p) => p.spec?.ingress ?? []),
            'nothing reaches an agent',
          ).toEqual([]);
          const egress = mine.flatMap((p) => p.spec?.egress ?? []);
          const toCoordinator = egress.filter((r) => r.to?.some((p) => selects(p.podSelector, coordinatorLabels)));
          expect(toCoordinator.flatMap((r) => r.ports ?? [])).toEqual([{ port: listenPort, protocol: 'TCP' }]);
          expect(
            egress.some((r) => r.to?.some((p) => selects(p.podSelector, otherRun))),
            "not another run's coordinator",
          ).toBe(false);
          const toDns = egress.filter((r) => r.to?.every(dns));
          // Both: the cluster DNS pods, and NodeLocal DNSCache's address, which no pod selector matches.
          expect(toDns.some((r) => r.to?.some(kubeDns)) && toDns.some((r) => r.to?.some(nodeLocalDns))).toBe(true);
          expect(toDns.some((r) => r.to?.some(cloudDns))).toBe(true);
          expect(toDns.flatMap((r) => r.ports ?? [])).toEqual([
            { port: 53, protocol: 'UDP' },
            { port: 53, protocol: 'TCP' },
          ]);
          // Whatever else an agent may reach is the target rule, shared with the coordinator.
          const target = egress.filter((r) => !toCoordinator.includes(r) && !toDns.includes(r));
          expect(target.length).toBeGreaterThan(0);
          for (const r of target) {
            expect(
              r.to?.some((p) => selects(p.podSelector, agentLabels)),
              'not other agents',
            ).toBe(false);
            for (const p of r.to ?? [])
              if (p.ipBlock && inCidr(METADATA_ADDRESS, p.ipBlock.cidr))
                expect(
                  p.ipBlock.except?.some((e) => inCidr(METADATA_ADDRESS, e)),
                  'no cloud metadata',
                ).toBe(true);
          }
          const coordinatorPolicies = policies.filter((p) => selects(p.spec?.podSelector, coordinatorLabels));
          const ingress = coordinatorPolicies.flatMap((p) => p.spec?.ingress ?? []);
          expect(coordinatorPolicies.some((p) => p.spec?.policyTypes?.includes('Ingress'))).toBe(true);
          // The agents' port from this run's agents only; the live /metrics from any scraper.
          const fromAgents = ingress.filter((r) => r.from !== undefined);
          expect(fromAgents.length).toBe(1);
          expect(fromAgents[0]!.from?.every((p) => selects(p.podSelector, agentLabels) && !p.namespaceSelector && !p.ipBlock)).toBe(true);
          expect(fromAgents[0]!.from?.some((p) => selects(p.podSelector, { ...agentLabels, [RUN_LABEL]: 'another-run' }))).toBe(false);
          expect(fromAgents[0]!.ports).toEqual([{ port: listenPort, protocol: 'TCP' }]);
          const metricsPort = coordinatorJob.spec!.template.spec!.containers[0]!.ports?.find((p) => p.name === 'metrics')?.containerPort;
          expect(ingress.filter((r) => r.from === undefined).flatMap((r) => r.ports)).toEqual([{ port: metricsPort, protocol: 'TCP' }]);
          // The coordinator reaches the same target rule (scrapes, /tokenize, object storage).
          const coordinatorEgress = coordinatorPolicies.flatMap((p) => p.spec?.egress ?? []);
          for (const r of target) expect(coordinatorEgress).toContainEqual(r);
        }
      },
    );

    it.each(runKustomizations)(
      '%s: results go to the standing volume under /results/<run>, the plan comes from a valid ConfigMap',
      async (dir) => {
        const objects = render(dir);
        expect(ofKind(objects, PersistentVolumeClaim.is), 'the results volume is not part of a run').toEqual([]);
        const pod = onlyOne(jobs(objects, 'coordinator'), 'coordinator Jobs').spec!.template.spec!;
        const coordinator = pod.containers[0]!;
        const mountAt = (path: string) =>
          pod.volumes?.find((v) => v.name === coordinator.volumeMounts?.find((m) => m.mountPath === path)?.name);
        expect(flag(coordinator, 'out')).toBe('/results/$(LOADFLEET_RUN)');
        expect(coordinator.env?.find((e) => e.name === 'LOADFLEET_RUN')?.valueFrom?.fieldRef?.fieldPath).toBe(
          `metadata.labels['${RUN_LABEL}']`,
        );
        const claim = mountAt('/results')?.persistentVolumeClaim?.claimName ?? '';
        expect(named(ofKind(render('results'), PersistentVolumeClaim.is), claim), `PVC ${claim} in deploy/k8s/results`).toBeDefined();
        const reader = onlyOne(ofKind(render('results-reader'), Pod.is), 'reader pods');
        expect(reader.spec?.volumes?.[0]?.persistentVolumeClaim?.claimName).toBe(claim);

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
        // The standing engine-sim must be what the plan targets, serving the model the plan asks for,
        // and the one thing the fleet may reach.
        if (dir === 'overlays/engine-sim' || dir === 'run:engine-sim') {
          const simObjects = render('engine-sim');
          const sim = onlyOne(ofKind(simObjects, Deployment.is), 'engine-sim Deployments');
          const target = new URL(plan.target?.base_url ?? '');
          const service = named(ofKind(simObjects, Service.is), target.hostname);
          expect(service?.spec?.ports?.some((p) => p.port === Number(target.port))).toBe(true);
          expect(matches(service?.spec?.selector, sim.spec?.template.metadata?.labels)).toBe(true);
          expect(flag(sim.spec!.template.spec!.containers[0]!, 'model')).toBe(plan.target?.model);
          const simLabels = sim.spec?.template.metadata?.labels;
          expect(simLabels?.['loadfleet.io/role']).toBe('target');
          const targetRule = ofKind(objects, NetworkPolicy.is).find((p) => baseName(p.metadata?.name) === 'loadfleet-target');
          expect(targetRule?.spec?.egress).toEqual([
            { to: [expect.objectContaining({})], ports: [{ port: Number(target.port), protocol: 'TCP' }] },
          ]);
          expect(selects(targetRule?.spec?.egress?.[0]?.to?.[0]?.podSelector, simLabels)).toBe(true);
        }
      },
    );

    it('the Grafana board is a ConfigMap the dashboard sidecar loads, and plots only metrics the coordinator serves', () => {
      const board = onlyOne(ofKind(render('grafana'), ConfigMap.is), 'dashboard ConfigMaps');
      expect(board.metadata?.labels?.['grafana_dashboard']).toBe('1');
      const text = board.data?.['loadfleet-live.dashboard.json'] ?? '';
      expect((JSON.parse(text) as { panels: unknown[] }).panels.length).toBeGreaterThan(0);
      const served = readFileSync(fileURLToPath(new URL('../coordinator/live/metric-families.ts', import.meta.url)), 'utf8');
      const plotted = [...new Set([...text.matchAll(/loadfleet_[a-z0-9_]+/g)].map((m) => m[0].replace(/_bucket$/, '')))];
      expect(plotted.length).toBeGreaterThan(5);
      for (const metric of plotted) expect(served, metric).toContain(`'${metric}'`);
    });

    it('overlays/cert-manager: a CA issuer of its own issues the TLS Secret the pods mount, for the name agents dial', () => {
      const objects = render('overlays/cert-manager');
      type Cert = K8sObject & {
        spec: { secretName: string; dnsNames?: string[]; isCA?: boolean; usages?: string[]; issuerRef: { name: string } };
      };
      type Issuer = K8sObject & { spec: { selfSigned?: object; ca?: { secretName: string } } };
      const certs = objects.filter((o): o is Cert => o.kind === 'Certificate');
      const issuers = objects.filter((o): o is Issuer => o.kind === 'Issuer');
      const mounted = new Set(podSpecs(objects).flatMap((p) => (p.volumes ?? []).map((v) => v.secret?.secretName).filter(Boolean)));
      const serving = onlyOne(
        certs.filter((c) => mounted.has(c.spec.secretName)),
        'certificates the pods mount',
      );
      const host = jobs(objects, 'agent')[0]!.spec!.template.spec!.containers[0]!.env!.find((e) => e.name === 'LOADFLEET_COORDINATOR_HOST')!
        .value!;
      expect(serving.spec.dnsNames).toContain(host);
      expect(serving.spec.usages).toContain('server auth');
      // Issued by a CA issuer whose CA certificate comes from a self-signed issuer: a root only loadfleet trusts.
      const caIssuer = named(issuers, serving.spec.issuerRef.name)!;
      const caCert = certs.find((c) => c.spec.secretName === caIssuer.spec.ca?.secretName)!;
      expect(caCert.spec.isCA).toBe(true);
      expect(named(issuers, caCert.spec.issuerRef.name)?.spec.selfSigned).toEqual({});
    });

    it('the wrapper gives each run its own CA, and the coordinator certificate names the Service agents dial', () => {
      const objects = render('run:engine-sim');
      const secret = ofKind(objects, Secret.is).find((s) => baseName(s.metadata?.name) === 'loadfleet-tls')!;
      const dir = tempDir('loadfleet-deploy-tls-');
      for (const key of ['ca.crt', 'tls.crt', 'tls.key']) writeFileSync(join(dir, key), Buffer.from(secret.data?.[key] ?? '', 'base64'));
      const host = jobs(objects, 'agent')[0]!.spec!.template.spec!.containers[0]!.env!.find((e) => e.name === 'LOADFLEET_COORDINATOR_HOST')!
        .value!;
      const verify = (name: string) =>
        spawnSync('openssl', ['verify', '-CAfile', join(dir, 'ca.crt'), '-verify_hostname', name, join(dir, 'tls.crt')], {
          encoding: 'utf8',
        });
      for (const name of [host, `${host}.lf27.svc`, `${host}.lf27.svc.cluster.local`]) expect(verify(name).status, name).toBe(0);
      expect(verify('loadfleet-coordinator-other').status, 'another name is refused').not.toBe(0);
      const token = ofKind(objects, Secret.is).find((s) => baseName(s.metadata?.name) === 'loadfleet-token')!;
      expect(Buffer.from(token.data?.['token'] ?? '', 'base64').toString()).toMatch(/^[0-9a-f]{64}$/);
      // A second render is a second run: new token, new CA.
      forget('run:engine-sim');
      const again = ofKind(render('run:engine-sim'), Secret.is);
      expect(again.find((s) => baseName(s.metadata?.name) === 'loadfleet-token')?.data?.['token']).not.toBe(token.data?.['token']);
    });
  },
);
