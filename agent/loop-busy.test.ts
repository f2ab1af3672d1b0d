import { describe, expect, it } from 'vitest';
import { LoopBusy } from './loop-busy.js';

// A fake loop: the test moves its idle and active totals (ms) and its clock, and ends turns.
function fakeLoop() {
  const t = { idle: 100, active: 50, now: 1000 };
  const checks: (() => void)[] = [];
  const busy = new LoopBusy({ times: () => ({ idle: t.idle, active: t.active }), nowMs: () => t.now, afterPoll: (fn) => checks.push(fn) });
  const work = (ms: number): void => {
    t.active += ms;
    t.now += ms;
  };
  const wait = (ms: number): void => {
    t.idle += ms;
    t.now += ms;
  };
  const endTurn = (): void => {
    for (const fn of checks.splice(0)) fn();
  };
  return { busy, work, wait, endTurn };
}

describe('how long bytes read now may have waited unread', () => {
  it('grows while the loop neither waits nor turns', () => {
    const { busy, work } = fakeLoop();
    work(2);
    expect(busy.readDelayBoundNs()).toBe(2_000_000);
    work(3);
    expect(busy.readDelayBoundNs()).toBe(5_000_000);
  });

  it('restarts after a wait, bounded by the active time since the previous look', () => {
    const { busy, work, wait } = fakeLoop();
    work(4);
    busy.readDelayBoundNs(); // a read at active 54
    work(0.25); // the rest of that callback
    wait(10);
    work(0.5); // woke, read, stamped
    expect(busy.readDelayBoundNs()).toBe(750_000); // the truth (0.5) plus what ran after the previous look
    work(1);
    expect(busy.readDelayBoundNs()).toBe(1_750_000);
  });

  it('gives the same bounds when reads that need none only note themselves (noteRead)', () => {
    const looked = fakeLoop();
    const noted = fakeLoop();
    const bounds: [number[], number[]] = [[], []];
    for (const [i, l] of [looked, noted].entries()) {
      for (let turn = 0; turn < 20; turn++) {
        for (let read = 0; read < 5; read++) {
          l.work(0.1 + ((turn * 7 + read) % 3) * 0.2);
          // The first read of every other turn stamps a first token; the rest need no bound.
          if (read === 0 && turn % 2 === 0) bounds[i]!.push(l.busy.readDelayBoundNs());
          else if (i === 0) l.busy.readDelayBoundNs();
          else l.busy.noteRead();
        }
        l.work(0.3); // the check phase before the marker
        l.endTurn();
        l.work(0.2); // timers after it
        if (turn % 3 === 0) l.wait(4);
      }
    }
    expect(bounds[1]).toEqual(bounds[0]);
    expect(bounds[0]!.some((b) => b > 0)).toBe(true);
  });

  it('keeps work settled after a read out of the next bound', () => {
    const { busy, work, wait } = fakeLoop();
    busy.readDelayBoundNs();
    work(20); // e.g. encoding a record batch
    busy.settle();
    wait(5);
    work(0.5);
    expect(busy.readDelayBoundNs()).toBe(500_000);
  });

  it('in a loop that never waits but keeps turning, is at most the time since the turn before last ended', () => {
    const { busy, work, endTurn } = fakeLoop();
    for (let turn = 0; turn < 50; turn++) {
      work(1);
      busy.readDelayBoundNs();
      endTurn();
    }
    work(0.5);
    // Busy for 50.5 ms without a wait, but the previous turn's poll came after the turn before it ended.
    expect(busy.readDelayBoundNs()).toBe(1_500_000);
  });

  it('never goes negative', () => {
    const { busy } = fakeLoop();
    expect(busy.readDelayBoundNs()).toBe(0);
  });
});
