import { describe, expect, it } from 'vitest';
import { chooseLocalLayout, workersOfAgentArgs } from './local-layout.js';

describe('local layout', () => {
  it('auto packs more agents than free cores into one process per core, sizes differing by at most one', () => {
    const l = chooseLocalLayout(8, 2.6, 1, 'auto');
    expect(l.chosen).toBe('packed');
    expect(l.processes).toBe(2);
    expect(l.agent_threads).toBe(2);
    expect(l.groups).toEqual([
      ['agent-1', 'agent-2', 'agent-3', 'agent-4'],
      ['agent-5', 'agent-6', 'agent-7', 'agent-8'],
    ]);
    expect(chooseLocalLayout(5, 3, 1, 'auto').groups.map((g) => g.length)).toEqual([2, 2, 1]);
    // No free core at all still counts one: one process serves them all.
    expect(chooseLocalLayout(3, 0.2, 1, 'auto').groups).toEqual([['agent-1', 'agent-2', 'agent-3']]);
  });

  it('auto keeps one process per agent when they fit, or when agents have worker threads', () => {
    expect(chooseLocalLayout(2, 2, 1, 'auto')).toMatchObject({ chosen: 'process-per-agent', processes: 2 });
    const threaded = chooseLocalLayout(4, 2, 2, 'auto');
    expect(threaded).toMatchObject({ chosen: 'process-per-agent', processes: 4, agent_threads: 8 });
    expect(threaded.why).toMatch(/keep their threads/);
  });

  it('follows an explicit choice', () => {
    expect(chooseLocalLayout(8, 1, 1, 'process-per-agent')).toMatchObject({ chosen: 'process-per-agent', processes: 8 });
    expect(chooseLocalLayout(4, 8, 1, 'packed')).toMatchObject({ chosen: 'process-per-agent', processes: 4 });
    expect(chooseLocalLayout(4, 2, 1, 'packed')).toMatchObject({ chosen: 'packed', processes: 2 });
  });

  it('reads --workers from the local agents’ extra arguments', () => {
    expect(workersOfAgentArgs([])).toBe(1);
    expect(workersOfAgentArgs(['--workers=3'])).toBe(3);
    expect(workersOfAgentArgs(['--workers', '2', '--self-test=skip'])).toBe(2);
    expect(workersOfAgentArgs(['--workers=auto'])).toBe(1);
  });
});
