// TTFT by the second of each request's intended send time, from requests.ndjson: the basis the
// plan's windows use, so a surge's slow requests stay in the surge on this chart — while the
// hlog chart places them in the second they finished. Fed row by row, like the lag series.

import { nearestRank as sortedNearestRank } from '../../shared/histogram.js';
import { getOrCreate } from '../../shared/maps.js';
import { GroupedValues } from './grouped-values.js';
import type { IntervalPercentiles } from './hlog-series.js';

const NS_PER_S = 1_000_000_000n;

// The keys this series needs beyond the lag's fields; every writer spells them this way (JSON keys).
const CLASS = /"class":"((?:[^"\\]|\\.)*)"/;
const STATUS = /"status":"([a-z_]+)"/;
const FIRST_CONTENT = /"first_content_unix_ns":(null|-?\d+)/;

/** The class, status and first-content time of one requests.ndjson line. */
export function ttftFields(line: string): { cls: string | null; ok: boolean; firstContentNs: bigint | null } {
  const cls = CLASS.exec(line);
  const fc = FIRST_CONTENT.exec(line);
  return {
    cls: cls ? (JSON.parse(`"${cls[1]}"`) as string) : null,
    ok: STATUS.exec(line)?.[1] === 'ok',
    firstContentNs: fc && fc[1] !== 'null' ? BigInt(fc[1]!) : null,
  };
}

/** Collects TTFTs of successful open-loop requests by class and second of intended send time. */
export class TtftByIntended {
  /** Class → its key in `ttfts`. */
  private readonly classes = new Map<string, number>();
  private readonly ttfts: GroupedValues;

  /**
   * @param runStartNs the run's start instant, the time axis origin.
   * @param maxInMemory TTFTs held in memory before they spill (grouped-values.ts).
   */
  constructor(
    private readonly runStartNs: bigint,
    maxInMemory?: number,
  ) {
    this.ttfts = new GroupedValues(maxInMemory);
  }

  /** Adds one request; failed ones and closed-loop ones (no intended time) are skipped. */
  add(cls: string | null, ok: boolean, intendedNs: bigint | null, sentNs: bigint | null, firstContentNs: bigint | null): void {
    if (cls === null || !ok || intendedNs === null || sentNs === null || firstContentNs === null) return;
    const rel = intendedNs - this.runStartNs;
    const second = Number(rel >= 0n ? rel / NS_PER_S : (rel - NS_PER_S + 1n) / NS_PER_S);
    const key = getOrCreate(this.classes, cls, () => this.classes.size);
    this.ttfts.add(key, second, Number(firstContentNs - sentNs) / 1e6);
  }

  /** Per class, each second's exact nearest-rank p50 and p95 TTFT (ms), in the hlog series' shape. Call once. */
  percentiles(): Map<string, IntervalPercentiles[]> {
    const byKey: IntervalPercentiles[][] = [...this.classes.keys()].map(() => []);
    this.ttfts.forEachGroup((key, second, sorted) => {
      byKey[key]!.push({
        startS: second,
        lengthS: 1,
        count: sorted.length,
        valuesMs: [sortedNearestRank(sorted, 0.5), sortedNearestRank(sorted, 0.95)],
      });
    });
    return new Map([...this.classes.keys()].map((cls, key) => [cls, byKey[key]!.sort((a, b) => a.startS - b.startS)]));
  }
}
