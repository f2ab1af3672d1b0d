import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Abortable } from './in-flight.js';
import { unwatch, watch } from './in-flight.js';

// A request that records how it was ended.
function request(timeoutMs: number): Abortable & { ended: string[] } {
  const ended: string[] = [];
  return { timeoutMs, deadlineMs: performance.now() + timeoutMs, ended, abort: (status, why) => void ended.push(`${status}: ${why}`) };
}

describe('requests in flight under one stop signal', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('times each request out at its own deadline, oldest first, and not the ones that ended', () => {
    const signal = new AbortController().signal;
    const a = request(1000);
    watch(signal, a);
    vi.advanceTimersByTime(300);
    const b = request(1000);
    const c = request(1000);
    watch(signal, b);
    watch(signal, c);
    unwatch(signal, b); // b ended by itself
    vi.advanceTimersByTime(699);
    expect(a.ended).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(a.ended).toEqual(['timeout: no end of stream within 1000 ms']);
    expect(c.ended).toEqual([]);
    vi.advanceTimersByTime(300);
    expect(c.ended).toEqual(['timeout: no end of stream within 1000 ms']);
    expect(b.ended).toEqual([]);
  });

  it('keeps requests of different timeout lengths apart', () => {
    const signal = new AbortController().signal;
    const long = request(5000);
    const short = request(100);
    watch(signal, long);
    watch(signal, short);
    vi.advanceTimersByTime(100);
    expect([short.ended.length, long.ended.length]).toEqual([1, 0]);
    vi.advanceTimersByTime(4900);
    expect(long.ended.length).toBe(1);
  });

  it('aborts every request still open when the signal fires, once, and leaves no timer behind', () => {
    const stopper = new AbortController();
    const [a, b, c] = [request(1000), request(1000), request(2000)];
    for (const r of [a, b, c]) watch(stopper.signal, r);
    unwatch(stopper.signal, b);
    stopper.abort();
    expect([a.ended, b.ended, c.ended]).toEqual([['aborted: run stopped'], [], ['aborted: run stopped']]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('clears its timer when the last request ends', () => {
    const signal = new AbortController().signal;
    const a = request(30_000);
    watch(signal, a);
    expect(vi.getTimerCount()).toBe(1);
    unwatch(signal, a);
    expect(vi.getTimerCount()).toBe(0);
  });
});
