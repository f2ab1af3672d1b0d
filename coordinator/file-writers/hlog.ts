// histograms.hlog: an HdrHistogram interval log (V2 compressed base64) that the Java, C, Go and
// Rust log readers accept. The JS library's writer has no BaseTime line and a max-value ratio
// meant for ms, so the few lines of the format are written here.

import { AtomicLineStream } from '../../shared/atomic-file.js';
import type { Histogram } from '../../shared/histogram.js';
import { encodeHistogram } from '../../shared/histogram.js';

/** Interval_Max is written in ms: ns values divided by this ratio. */
export const HLOG_MAX_VALUE_RATIO = 1e6;

/** Streams interval histograms into an .hlog file. */
export class HlogWriter {
  private readonly out: AtomicLineStream;

  constructor(path: string, baseUnixNs: bigint) {
    this.out = new AtomicLineStream(path);
    const baseS = unixSeconds(baseUnixNs);
    this.out.write(
      [
        '#[loadfleet interval log: 1 s intervals merged across agents by hdr-add; values in ns; tags <class>/<metric>]',
        `#[StartTime: ${baseS} (seconds since epoch), ${new Date(Number(baseUnixNs / 1_000_000n)).toISOString()}]`,
        `#[BaseTime: ${baseS} (seconds since epoch)]`,
        '#[MaxValueUnitRatio: 1000000.0 (Interval_Max = max ns / ratio = ms)]',
        '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
        '',
      ].join('\n'),
    );
  }

  /** Appends one tagged interval starting `startS` seconds after the base time. */
  interval(tag: string, startS: number, lengthS: number, h: Histogram): void {
    const max = (h.maxValue / HLOG_MAX_VALUE_RATIO).toFixed(3);
    this.out.write(`Tag=${tag},${startS.toFixed(3)},${lengthS.toFixed(3)},${max},${encodeHistogram(h)}\n`);
  }

  /** Closes and renames the file into place. */
  close(): Promise<void> {
    return this.out.close();
  }
}

function unixSeconds(ns: bigint): string {
  const s = ns / 1_000_000_000n;
  const ms = (ns % 1_000_000_000n) / 1_000_000n;
  return `${s}.${ms.toString().padStart(3, '0')}`;
}
