// suite: contract
// The soak's memory judgement (test/hosts/memory-slope.ts) on recorded and synthetic samples: it
// passes what the coordinator retains today and fails a leak of 1 KiB per request on top of it.
import { describe, expect, it } from 'vitest';
import type { MemoryPoint } from './hosts/memory-slope.js';
import { judgeMemorySlope } from './hosts/memory-slope.js';

// The coordinator's JS heap after a full GC against the requests it had taken in, from 10 s into
// the load to its end: two runs of CI's chaos soak (30 s, 10 req/s, 3 agents, 2 faults each) on
// 2026-12-04, this 2-core machine.
const RECORDED: [number, number][][] = [
  [
    [80, 19817176],
    [110, 19835736],
    [135, 19920856],
    [153, 19992552],
    [162, 20033736],
    [175, 20045992],
    [184, 19973712],
    [195, 20000384],
    [205, 19989336],
    [214, 20013672],
    [224, 20017184],
    [234, 20018432],
    [244, 20022016],
    [255, 20050192],
    [265, 20052472],
    [274, 20064232],
    [285, 20065560],
    [294, 20065456],
  ],
  [
    [93, 19915328],
    [108, 19919160],
    [118, 19946256],
    [135, 19994672],
    [145, 20010680],
    [155, 20021824],
    [169, 20020232],
    [180, 19988720],
    [191, 19994680],
    [200, 20012000],
    [212, 20026872],
    [224, 20025992],
    [234, 20030112],
    [243, 20054352],
    [252, 20056928],
    [264, 20060432],
    [274, 20073928],
    [285, 20095376],
    [295, 20104696],
  ],
];
const BOUND = 1280;
const points = (xs: [number, number][]): MemoryPoint[] => xs.map(([requests, bytes]) => ({ requests, bytes }));
const leak = (ps: MemoryPoint[], perRequest: number): MemoryPoint[] =>
  ps.map((p) => ({ requests: p.requests, bytes: p.bytes + perRequest * p.requests }));

describe('memory slope per request', () => {
  it('passes what the coordinator retains in the soak, and fails a 1 KiB-per-request leak on the same samples', () => {
    for (const run of RECORDED) {
      const today = judgeMemorySlope(points(run), BOUND);
      expect(today.pass).toBe(true);
      expect(today.bytesPerRequest).toBeGreaterThan(600);
      expect(today.bytesPerRequest).toBeLessThan(1100);
      const leaky = judgeMemorySlope(leak(points(run), 1024), BOUND);
      expect(leaky.pass).toBe(false);
      // Not by a hair: past the bound by more than the slope's resolution.
      expect(leaky.bytesPerRequest - today.resolution).toBeGreaterThan(BOUND);
    }
  });

  it('one sample lifted by buffers in flight does not move it; a steady leak does', () => {
    // 20 MiB flat, ±20 KiB of noise, one sample +6 MiB (a frame being parsed at the sample), 10 req/s for 20 s.
    let seed = 7;
    const noise = (): number => {
      seed = (seed * 16807) % 2147483647;
      return (seed / 2147483647 - 0.5) * 40_960;
    };
    const flat: MemoryPoint[] = Array.from({ length: 20 }, (_, i) => ({ requests: 100 + 10 * i, bytes: 20 * 2 ** 20 + noise() }));
    flat[15]!.bytes += 6 * 2 ** 20;
    const j = judgeMemorySlope(flat, BOUND);
    expect(Math.abs(j.bytesPerRequest)).toBeLessThan(300);
    expect(j.pass).toBe(true);
    expect(judgeMemorySlope(leak(flat, 1024), 512).pass).toBe(false);
    expect(judgeMemorySlope(leak(flat, 2048), BOUND).pass).toBe(false);
    // Too few samples to fit: not a pass.
    expect(judgeMemorySlope(flat.slice(0, 2), BOUND).pass).toBe(false);
  });
});
