import { describe, expect, it } from 'vitest';
import { ArmedFailpoints, FAILPOINTS, failpoint, parseFailpoints } from './failpoints.js';

describe('failpoints', () => {
  it('parses name=action[@N] terms, and refuses an unknown name or action', () => {
    expect(parseFailpoints('journal.append=kill|recover.reopen=throw@3')).toEqual(
      new Map([
        ['journal.append', { action: 'kill', at: 1 }],
        ['recover.reopen', { action: 'throw', at: 3 }],
      ]),
    );
    expect(() => parseFailpoints('journal.apend=kill')).toThrow('no failpoint named journal.apend');
    expect(() => parseFailpoints('journal.append=panic')).toThrow('is not name[:detail]=kill|throw[@N]');
    expect(parseFailpoints('rundir.rename.before:run.json=kill@2')).toEqual(
      new Map([['rundir.rename.before:run.json', { action: 'kill', at: 2 }]]),
    );
    expect(new Set(FAILPOINTS).size).toBe(FAILPOINTS.length);
  });

  it('armed: kill at the Nth pass only, said first; throw is an EIO there; other names pass', () => {
    const events: string[] = [];
    const fp = new ArmedFailpoints(
      parseFailpoints('journal.append=kill@3|recover.reopen=throw@2'),
      () => void events.push('killed'),
      (line) => void events.push(line.trim()),
    );
    for (let i = 0; i < 5; i++) {
      try {
        fp.pass('journal.append');
      } catch {
        events.push(`threw ${i}`);
      }
    }
    // (A real kill never returns; the fake one does, so the throw after it shows.)
    expect(events).toEqual(['[failpoint] journal.append (kill, pass 3)', 'killed', 'threw 2']);
    events.length = 0;
    fp.pass('recover.reopen');
    expect(() => fp.pass('recover.reopen')).toThrow(expect.objectContaining({ code: 'EIO', message: 'failpoint recover.reopen' }));
    fp.pass('recover.reopen');
    fp.pass('journal.flush.before-sync');
    expect(events).toEqual(['[failpoint] recover.reopen (throw, pass 2)']);
  });

  it('armed for one detail: only its passes count', () => {
    const events: string[] = [];
    const fp = new ArmedFailpoints(
      parseFailpoints('rundir.rename.before:run.json=kill'),
      () => void events.push('killed'),
      () => {},
    );
    fp.pass('rundir.rename.before', 'server-metrics.csv');
    fp.pass('rundir.rename.before');
    expect(events).toEqual([]);
    expect(() => fp.pass('rundir.rename.before', 'run.json')).toThrow('failpoint rundir.rename.before:run.json');
    expect(events).toEqual(['killed']);
  });

  it('unset (as in this process): every failpoint passes', () => {
    expect(process.env.LOADFLEET_FAILPOINTS ?? '').toBe('');
    for (const name of FAILPOINTS) failpoint(name);
  });
});
