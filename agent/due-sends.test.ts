import { describe, expect, it } from 'vitest';
import { readAt, sendAt } from './due-sends.js';

// The instants lie seconds ahead of the real clock, so the loop's own wake-up cannot be what
// released a send here: only the reads this test reports can.
const released = async (p: Promise<void>): Promise<boolean> => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise<void>((r) => setImmediate(r)); // past the microtasks a read leaves behind
  return done;
};

describe('sends released by reads', () => {
  const now = () => performance.now() * 1e6;

  it('a read stamped before the instant releases nothing; one at or past it releases the send', async () => {
    const due = now() + 5e9;
    const send = sendAt(now, due);
    readAt(due - 1);
    expect(await released(send)).toBe(false);
    readAt(due);
    expect(await released(send)).toBe(true);
  });

  it('releases only the sends due by the read, and later reads the rest', async () => {
    const base = now() + 5e9;
    const [a, b, c] = [sendAt(now, base + 3e6), sendAt(now, base + 1e6), sendAt(now, base + 2e6)];
    readAt(base + 2e6);
    expect([await released(a), await released(b), await released(c)]).toEqual([false, true, true]);
    readAt(base + 2.5e6); // the earliest still waiting is a's: nothing to release
    expect(await released(a)).toBe(false);
    readAt(base + 3e6);
    expect(await released(a)).toBe(true);
  });

  it('a send released twice (two reads, or a read and its wake-up) resolves once and is forgotten', async () => {
    const due = now() + 5e9;
    const send = sendAt(now, due);
    readAt(due);
    readAt(due + 1);
    expect(await released(send)).toBe(true);
    const next = sendAt(now, due + 1e9);
    readAt(due + 2);
    expect(await released(next)).toBe(false);
  });

  it('without any read, the loop wakes the send at its instant', async () => {
    const due = now() + 3e6;
    await sendAt(now, due);
    expect(now()).toBeGreaterThanOrEqual(due);
  });
});
