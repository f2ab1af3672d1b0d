// The coordinator's listen address in its Kubernetes pods is `[::]` (loadfleet-k8s --listen-host):
// one socket for IPv6 and IPv4 agents, so IPv6-only, dual-stack and IPv4 clusters all reach it.
// Real processes on loopback: agents over 127.0.0.1 and over ::1 join one coordinator on [::].
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { constantRatePlan, onlyRunDir, readRunJson, startNode, tempDir, waitFor, writePlan } from './harness.js';
import { skipFor } from './require.js';

const HAS_IPV6 = await new Promise<boolean>((resolve) => {
  const probe = createServer();
  probe.once('error', () => resolve(false));
  probe.listen(0, '::1', () => probe.close(() => resolve(true)));
});

describe.skipIf(skipFor('the dual-stack listen test', HAS_IPV6 ? null : 'no IPv6 loopback (::1) on this machine'))(
  'a coordinator listening on [::]',
  () => {
    it('takes an IPv4 agent and an IPv6 agent on one port', async () => {
      const work = tempDir();
      const env = { LOADFLEET_TOKEN: 'dual-stack-token' };
      const plan = writePlan(work, constantRatePlan('dual', 1, 4));
      const coord = startNode(
        'coordinator/main.js',
        ['start', '--agents', '2', '--plan', plan, '--out', join(work, 'out'), '--listen', '[::]:0'],
        env,
      );
      const [, port] = await waitFor(coord.child.stderr!, /waiting for 2 agent\(s\) at ws:\/\/\[::\]:(\d+)/);
      const agents = [`ws://127.0.0.1:${port}`, `ws://[::1]:${port}`].map((url, i) =>
        startNode('agent/main.js', ['--coordinator', url, '--id', `v${i === 0 ? 4 : 6}`], env),
      );
      const res = await coord.done;
      await Promise.all(agents.map((a) => a.done));
      expect(res.code, res.stderr).toBe(0);
      const run = readRunJson(onlyRunDir(join(work, 'out')));
      const remotes = Object.fromEntries(run.agents.map((a: { agent_id: string; remote: string }) => [a.agent_id, a.remote]));
      expect(remotes['v4']).toMatch(/^(::ffff:)?127\.0\.0\.1:\d+$/);
      expect(remotes['v6']).toMatch(/^(\[::1\]|::1):\d+$/);
    });
  },
);
