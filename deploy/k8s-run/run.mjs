// `loadfleet-k8s run`: preflight, apply the run's render, tie its objects to the coordinator Job,
// follow it (the coordinator's own view streamed, the cluster's facts printed once each, fail fast
// on a pod that cannot start), fetch the results with the placement, and leave nothing behind.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { coordinatorExit, decideExit, readRuns } from './outcome.mjs';
import { gather, preflight } from './preflight.mjs';
import { fetchResults } from './results.mjs';
import { assess, failedContainer, JOIN_QUIET_S, placement, unjoined } from './watch.mjs';

const POLL_MS = Number(process.env.LOADFLEET_K8S_POLL_S ?? 5) * 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Every object of the run, by label: what `delete` and `--cleanup post` remove. */
export const RUN_KINDS = 'jobs.batch,services,poddisruptionbudgets.policy,networkpolicies.networking.k8s.io,configmaps,secrets,pods';
const kindsOf = (o) => (o?.serviceMonitor ? `${RUN_KINDS},servicemonitors.monitoring.coreos.com` : RUN_KINDS);

export function deleteRun(k, run, o) {
  return k.run(['delete', kindsOf(o), '-l', `loadfleet.io/run=${run}`, '--ignore-not-found', '--wait=false']);
}

/**
 * Deletes the run's objects and waits (up to 2 minutes: pods stop within their grace), then lists
 * what is left: [] when nothing of the run remains, else each leftover's kind/name.
 */
export function deleteAndCheck(k, run, o) {
  k.run(['delete', kindsOf(o), '-l', `loadfleet.io/run=${run}`, '--ignore-not-found', '--wait=true', '--timeout=120s']);
  const left = k.run(['get', kindsOf(o), '-l', `loadfleet.io/run=${run}`, '-o', 'name']);
  if (left.code !== 0) return [`(not listed: ${left.stderr.trim()})`];
  return left.stdout.split('\n').filter(Boolean);
}

/**
 * Stops the coordinator and waits for it before anything is fetched: its Job is suspended (the Job
 * controller then deletes its pod, which gets the image's stop signal, writes its run and exits,
 * and no replacement is made), then its pods' deletion is awaited.
 */
function stopCoordinator(k, o, warn) {
  const job = `job/loadfleet-coordinator-${o.run}`;
  k.run(['patch', job, '--type=merge', '-p', JSON.stringify({ spec: { suspend: true } })]);
  const waited = k.run([
    'wait',
    '--for=delete',
    'pod',
    '-l',
    `loadfleet.io/run=${o.run},app.kubernetes.io/component=coordinator`,
    '--timeout=150s',
  ]);
  if (waited.code !== 0 && !/no matching resources/i.test(waited.stderr))
    warn(`run ${o.run}: the coordinator did not stop within 150 s: ${waited.stderr.trim()}`);
}

/**
 * Owner references to the coordinator Job on every other object of the run, so the Job's TTL (or
 * its deletion) takes the agents' Job, Service, PDB, policies, ConfigMap and Secrets with it.
 */
function ownObjects(k, o, names) {
  const coordinator = `job.batch/loadfleet-coordinator-${o.run}`;
  const uid = k.run(['get', coordinator, '-o', 'jsonpath={.metadata.uid}']).stdout.trim();
  if (!uid) return false;
  const ref = { apiVersion: 'batch/v1', kind: 'Job', name: `loadfleet-coordinator-${o.run}`, uid, blockOwnerDeletion: false };
  for (const name of names.filter((n) => n !== coordinator))
    k.run(['patch', name, '--type=merge', '-p', JSON.stringify({ metadata: { ownerReferences: [ref] } })]);
  return true;
}

/**
 * One look: the run's pods and Jobs, the events of each (the Jobs' FailedCreate, the scheduler's,
 * the autoscalers', the kubelet's), and the last log lines of each container that failed (read once).
 */
function look(k, o, logs, joined) {
  const items = (x) => x?.items ?? [];
  const pods = items(k.json(['get', 'pods', '-l', `loadfleet.io/run=${o.run}`]));
  const jobs = [`loadfleet-coordinator-${o.run}`, `loadfleet-agents-${o.run}`];
  const names = new Set([...pods.map((p) => p.metadata.name), ...jobs]);
  const silent = new Set(
    unjoined({ pods, joined }, Date.now())
      .filter((u) => u.forS >= JOIN_QUIET_S)
      .map((u) => u.pod.metadata.name),
  );
  for (const p of pods.filter((x) => failedContainer(x) || silent.has(x.metadata.name)))
    if (!(p.metadata.name in logs)) {
      const r = k.run(['logs', `pod/${p.metadata.name}`, '--tail=5']);
      logs[p.metadata.name] = r.code === 0 ? r.stdout : '';
    }
  return {
    pods,
    events: items(k.json(['get', 'events'])).filter((e) => names.has(e.involvedObject?.name)),
    coordinatorJob: k.json(['get', 'job', jobs[0]]),
    agentsJob: k.json(['get', 'job', jobs[1]]),
    logs,
    joined,
  };
}

export async function runCommand(k, o, workDir, say, warn) {
  if (o.preflight) {
    const verdict = preflight(o, await gather(k, o));
    for (const n of verdict.notes) say(`preflight: ${n}`);
    for (const w of verdict.warnings) warn(`preflight: ${w}`);
    if (verdict.errors.length > 0) {
      for (const e of verdict.errors) warn(`preflight: ${e}`);
      warn(`run ${o.run}: nothing applied (--no-preflight skips these checks)`);
      return 1;
    }
  }
  const applied = k.run(['apply', '-k', workDir, '-o', 'name']);
  if (applied.code !== 0) {
    warn(applied.stderr.trim());
    deleteRun(k, o.run, o);
    warn(`run ${o.run}: apply failed; what was created is deleted again`);
    return 1;
  }
  if (!ownObjects(k, o, applied.stdout.split('\n').filter(Boolean)))
    warn(`run ${o.run}: could not set owner references; delete it with: loadfleet-k8s delete ${o.run}`);
  say(
    `run ${o.run} started in namespace ${o.namespace}: ${o.agents} agents (may lose ${o.maxAgentLoss}), ${o.mode}, deadline ${o.deadlineS} s`,
  );

  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const printed = new Set();
  let logs;
  let logPod;
  let outcome;
  let reason;
  let last = { pods: [] };
  const podLogs = {};
  // The agents the coordinator said joined (its log: "agent loadfleet-agents-R-3 joined from … (4/16)"):
  // undefined until its log is heard at all, so a log that cannot be read never looks like silence.
  let joined;
  const heard = (line) => {
    joined ??= new Set();
    const m = /agent \S+-(\d+) joined\b/.exec(line);
    if (m) joined.add(m[1]);
    const all = /\((\d+)\/(\d+)\)\s*$|\b(\d+)\/(\d+) agents joined/.exec(line);
    if (all && (all[1] ?? all[3]) === (all[2] ?? all[4])) joined.all = true;
  };
  const bounds = { startTimeoutS: o.startTimeoutS, maxAgentLoss: o.maxAgentLoss, agents: o.agents, run: o.run };
  // Set when the wrapper ends the run (the cluster refused or lost it), not the coordinator.
  let clusterFailure;
  const until = Date.now() + (o.deadlineS + o.startTimeoutS + 120) * 1000;
  try {
    while (!outcome) {
      last = look(k, o, podLogs, joined);
      const verdict = assess(last, Date.now(), bounds);
      for (const line of verdict.lines)
        if (!printed.has(line)) {
          printed.add(line);
          warn(`run ${o.run}: ${line}`);
        }
      // The coordinator's own live view, streamed while its pod runs (a retried experiment
      // coordinator is a new pod: follow that one).
      const coordinator = last.pods.find(
        (p) => p.metadata.labels?.['app.kubernetes.io/component'] === 'coordinator' && p.status?.phase === 'Running',
      );
      if (coordinator && coordinator.metadata.name !== logPod) {
        logs?.kill();
        logPod = coordinator.metadata.name;
        logs = k.follow(['logs', '-f', `pod/${logPod}`], (l) => {
          heard(l);
          say(`coordinator | ${l}`);
        });
      }
      if (verdict.outcome !== 'running') {
        outcome = verdict.outcome;
        reason = verdict.reason;
        if (outcome === 'failed' && !/^the coordinator Job failed/.test(reason)) clusterFailure = reason;
      } else if (interrupted) {
        outcome = 'failed';
        reason = 'interrupted';
        clusterFailure = reason;
      } else if (Date.now() > until) {
        outcome = 'failed';
        reason = `not finished ${o.deadlineS + o.startTimeoutS + 120} s after the start`;
        clusterFailure = reason;
      } else await sleep(POLL_MS);
    }
  } finally {
    logs?.kill();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  if (outcome === 'failed') {
    warn(`run ${o.run} failed: ${reason}`);
    // Agents would otherwise hold their CPUs until their join timeout or the deadline.
    if (o.cleanup === 'post') k.run(['delete', 'job', `loadfleet-agents-${o.run}`, '--ignore-not-found', '--wait=false']);
    // The coordinator writes its run when stopped: stopped, and waited for, before the fetch.
    if (clusterFailure) {
      warn(`run ${o.run}: stopping the coordinator (it writes what it has) and waiting for it`);
      stopCoordinator(k, o, warn);
      last = look(k, o, podLogs, joined);
    }
    const tail = k.run(['logs', `job/loadfleet-coordinator-${o.run}`, '--tail=20']);
    if (tail.code === 0 && tail.stdout.trim()) warn(tail.stdout.trimEnd());
  } else say(`run ${o.run}: the coordinator Job completed`);

  const ran = last.pods.some((p) => p.metadata.labels?.['app.kubernetes.io/component'] === 'coordinator' && p.spec?.nodeName);
  let fetched = { ok: false, problem: 'the coordinator never started' };
  const dir = join(o.out, o.run);
  if (ran) {
    fetched = fetchResults(k, o, o.image, (l) => warn(`run ${o.run}: ${l}`));
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'placement.json'),
      `${JSON.stringify({ run: o.run, namespace: o.namespace, pods: placement(last.pods) }, null, 2)}\n`,
    );
    if (fetched.ok) say(`results: ${dir} (${fetched.files} files, ${fetched.bytes} bytes, placement.json)`);
    else warn(`run ${o.run}: results not fetched: ${fetched.problem} (loadfleet-k8s fetch ${o.run} retries)`);
  }
  // The exit says what the run was, from its run.json and the coordinator's own exit code.
  const verdict = decideExit({
    clusterFailure,
    coordinatorFailed: outcome === 'failed',
    exit: coordinatorExit(last.pods),
    runs: fetched.ok ? readRuns(dir) : [],
    fetched: fetched.ok,
  });
  for (const line of verdict.lines) (verdict.code === 0 ? say : warn)(`run ${o.run}: ${line}`);

  if (o.cleanup === 'post' && (fetched.ok || !ran)) {
    const left = deleteAndCheck(k, o.run, o);
    if (left.length === 0) say(`run ${o.run}: its objects are deleted and none is left (--cleanup post); the results volume stays`);
    else warn(`run ${o.run}: left behind after the delete: ${left.join(', ')} (loadfleet-k8s delete ${o.run})`);
  } else
    say(
      `run ${o.run}: left in place (${o.cleanup === 'never' ? '--cleanup never' : 'results not fetched'}); loadfleet-k8s delete ${o.run} removes it`,
    );
  return verdict.code;
}
