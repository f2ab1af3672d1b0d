// Several hosts on one machine: network namespaces joined by veth pairs to a bridge that lives
// in a namespace of its own (nothing is added to the host's network). Requires root and iproute2.
import { execFileSync } from 'node:child_process';

/** One test host: its namespace name and address. */
export interface Host {
  ns: string;
  ip: string;
}

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Why namespaces cannot be made here, or null when they can. */
export function netnsUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'multi-host tests need root (ip netns)';
  const probe = `lfprobe${process.pid}`;
  try {
    ip('netns', 'add', probe);
    ip('netns', 'del', probe);
    return null;
  } catch (err) {
    return `ip netns is not usable here: ${(err as Error).message.split('\n')[0]}`;
  }
}

/** Builds `names.length` hosts on 10.213.<subnet>.0/24; returns them and a teardown function. */
export function buildHosts(names: readonly string[], subnet: number): { hosts: Record<string, Host>; destroy(): void } {
  const tag = `lf${process.pid % 100000}`;
  const bridgeNs = `${tag}-br`;
  const made: string[] = [];
  const destroy = (): void => {
    for (const ns of made.reverse()) {
      try {
        ip('netns', 'del', ns);
      } catch {
        // already gone
      }
    }
  };
  try {
    ip('netns', 'add', bridgeNs);
    made.push(bridgeNs);
    ip('-n', bridgeNs, 'link', 'add', 'br0', 'type', 'bridge');
    ip('-n', bridgeNs, 'link', 'set', 'br0', 'up');
    const hosts: Record<string, Host> = {};
    names.forEach((name, i) => {
      const ns = `${tag}-${name}`;
      const addr = `10.213.${subnet}.${i + 1}`;
      ip('netns', 'add', ns);
      made.push(ns);
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      ip('link', 'add', `${tag}h${i}`, 'netns', ns, 'type', 'veth', 'peer', 'name', `${tag}b${i}`, 'netns', bridgeNs);
      ip('-n', ns, 'link', 'set', `${tag}h${i}`, 'name', 'eth0');
      ip('-n', ns, 'addr', 'add', `${addr}/24`, 'dev', 'eth0');
      ip('-n', ns, 'link', 'set', 'eth0', 'up');
      ip('-n', bridgeNs, 'link', 'set', `${tag}b${i}`, 'master', 'br0');
      ip('-n', bridgeNs, 'link', 'set', `${tag}b${i}`, 'up');
      hosts[name] = { ns, ip: addr };
    });
    return { hosts, destroy };
  } catch (err) {
    destroy();
    throw err;
  }
}
