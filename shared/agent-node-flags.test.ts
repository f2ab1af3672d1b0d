import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENT_NODE_FLAGS } from './agent-node-flags.js';

describe('agent node flags', () => {
  it('deploy/bin/loadfleet starts an agent with the same V8 flags as a local agent', () => {
    const script = readFileSync(new URL('../deploy/bin/loadfleet', import.meta.url), 'utf8');
    const line = script.split('\n').find((l) => /^\s*agent\)/.test(l));
    const m = /node_flags=(?:'([^']*)'|(\S+))/.exec(line ?? '');
    const flags = (m?.[1] ?? m?.[2] ?? '').split(' ').filter(Boolean);
    expect(flags).toEqual([...AGENT_NODE_FLAGS]);
  });
});
