import { describe, expect, it } from 'vitest';
import { StallClock } from './late-tick.js';

describe('StallClock', () => {
  it('counts a dead link’s silence on a responsive loop', () => {
    let now = 0;
    const clock = new StallClock(1000, () => now);
    const lastHeard = 1000;
    let silence = 0;
    for (now = 1000; now <= 7000; now += 1000) silence = clock.silenceMs(lastHeard, clock.tick());
    expect(silence).toBe(6000);
  });

  it('does not count this process’s stall, nor a busy turn right after it, as the peer’s silence', () => {
    let now = 0;
    const clock = new StallClock(1000, () => now);
    const at = (t: number): number => {
      now = t;
      return clock.tick();
    };
    at(1000);
    at(2000);
    const lastPong = 2010; // the answer to the ping of 2000
    // The loop is blocked from 2500 to 8400: the late tick judges nothing of what happened meanwhile.
    expect(clock.silenceMs(lastPong, at(8400))).toBe(0);
    // Its ping's pong waits unread behind a 1.9 s busy turn: 1.9 s of silence, not 8.3.
    expect(clock.silenceMs(lastPong, at(10_300))).toBe(1900);
    // A peer that really is gone is still noticed, 5 s after the stall ended.
    for (let t = 11_300; t <= 13_300; t += 1000) at(t);
    expect(clock.silenceMs(lastPong, at(14_300))).toBe(5900);
  });

  it('calls a tick late only past two periods: a slow loop is not a stall', () => {
    let now = 0;
    const clock = new StallClock(1000, () => now);
    now = 1900;
    expect(clock.silenceMs(0, clock.tick())).toBe(1900);
    now = 4000;
    expect(clock.silenceMs(0, clock.tick())).toBe(0);
  });
});
