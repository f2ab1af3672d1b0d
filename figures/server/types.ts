// What one scrape produced, shared by the scraper (I/O), the CSV writer and the pure derivations.
import type { PromSample } from './prom-parse.js';

/** Why a scrape gave no usable sample. */
export type ScrapeErrorKind = 'unreachable' | 'timeout' | 'http_status' | 'garbled' | 'too_large' | 'auth_file';

/** One scrape of one source: the pre/post snapshot or an interval tick. */
export interface ScrapeRecord {
  source: string;
  kind: 'pre' | 'tick' | 'post';
  /** Tick index k (due at start + k·interval); null for snapshots. */
  tick: number | null;
  /** When the scrape began, Unix ns in the coordinator's clock. */
  startUnixNs: bigint;
  /** The same instant in seconds from the run's start (negative for the pre snapshot). */
  elapsedS: number;
  /** Start minus due time of a tick, ms; null for snapshots. */
  lagMs: number | null;
  /** From the request's start to the body read and parsed (or the error), ms. */
  durationMs: number;
  httpStatus: number | null;
  error: { kind: ScrapeErrorKind; message: string } | null;
  /** The parsed series of a good scrape (null on error). */
  series: PromSample[] | null;
  /** Families the text declared with `# TYPE` (a declared family without series reads as 0). */
  families: ReadonlySet<string>;
}

/** Everything scraped from one source during one run. */
export interface SourceResult {
  name: string;
  url: string;
  intervalS: number;
  records: ScrapeRecord[];
  /** Ticks due while the previous scrape of this source was still running (or the loop was late). */
  skippedTicks: number;
}
