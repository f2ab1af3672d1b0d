// The soak's memory judgement: bytes retained per request, from a line through (requests taken in
// so far, bytes retained after a full GC) over the load past its warm-up. A leak of b bytes per
// request adds b to the slope whatever the run's length, so CI's 30 s soak judges the same figure
// a long soak does, with a wider resolution. The line is Theil–Sen's (the median of the slopes
// between every pair of samples): buffers in flight at a sample (a write not yet flushed, a frame
// being parsed) lift single samples by MiB, and a least-squares line would follow them.
import { readFileSync } from 'node:fs';

/** One sample: requests the process had taken in by then, and the bytes it retained. */
export interface MemoryPoint {
  requests: number;
  bytes: number;
}

/** The fit and the judgement. */
export interface MemorySlope {
  points: number;
  bytesPerRequest: number;
  /**
   * The smallest change of slope the samples resolve: 4 × the residuals' robust spread
   * (1.4826 × their median absolute deviation) over the span of requests fitted.
   */
  resolution: number;
  boundBytesPerRequest: number;
  pass: boolean;
}

/** Theil–Sen slope of bytes on requests; passes when it is at most `bound` bytes per request. */
export function judgeMemorySlope(points: readonly MemoryPoint[], bound: number): MemorySlope {
  const n = points.length;
  const slopes: number[] = [];
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) {
      const dx = points[j]!.requests - points[i]!.requests;
      if (dx !== 0) slopes.push((points[j]!.bytes - points[i]!.bytes) / dx);
    }
  if (slopes.length < 3)
    return { points: n, bytesPerRequest: Number.NaN, resolution: Number.NaN, boundBytesPerRequest: bound, pass: false };
  const slope = median(slopes);
  const intercept = median(points.map((p) => p.bytes - slope * p.requests));
  const spread = 1.4826 * median(points.map((p) => Math.abs(p.bytes - intercept - slope * p.requests)));
  const span = Math.max(...points.map((p) => p.requests)) - Math.min(...points.map((p) => p.requests));
  return { points: n, bytesPerRequest: slope, resolution: (4 * spread) / span, boundBytesPerRequest: bound, pass: slope <= bound };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Reads a heap-sampler.ts log: unix ms, JS heap used and external bytes per line. */
export function readHeapLog(path: string): { ms: number; heapUsed: number; external: number }[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => {
      const [ms, heapUsed, external] = l.split(' ').map(Number);
      return { ms: ms!, heapUsed: heapUsed!, external: external! };
    });
}
