// run.json names the machine an agent ran on, not only its container: with LOADFLEET_NODE_NAME
// set (the Kubernetes manifests set it from the pod's spec.nodeName), an agent's host is
// NODE/HOSTNAME, so two agents on one node are visible as such. Real coordinator, agents and
// engine-sim on loopback.
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { constantRatePlan, listeningCoordinator, onlyRunDir, readRunJson, startNode, tempDir, writePlan } from './harness.js';

describe('the node an agent ran on', () => {
  it('is in run.json when LOADFLEET_NODE_NAME is set, and the plain hostname when it is not', async () => {
    // No target in the plan: the coordinator serves its own engine-sim.
    const work = tempDir();
    const env = { LOADFLEET_TOKEN: 'node-name-test' };
    const { coord, url } = await listeningCoordinator(
      ['--agents', '2', '--plan', writePlan(work, constantRatePlan('node-name', 2, 4)), '--out', join(work, 'out')],
      env,
    );
    const agents = [
      startNode('agent/main.js', ['--coordinator', url, '--id', 'on-node'], { ...env, LOADFLEET_NODE_NAME: 'pool-a-7' }),
      startNode('agent/main.js', ['--coordinator', url, '--id', 'plain'], { ...env, LOADFLEET_NODE_NAME: '' }),
    ];
    const res = await coord.done;
    await Promise.all(agents.map((a) => a.done));
    expect(res.code, res.stderr).toBe(0);
    const run = readRunJson(onlyRunDir(join(work, 'out')));
    const host = (id: string) => (run.agents as { agent_id: string; host: string }[]).find((a) => a.agent_id === id)?.host;
    expect(host('on-node')).toBe(`pool-a-7/${hostname()}`);
    expect(host('plain')).toBe(hostname());
  }, 60_000);
});
