// The coordinator's scraper: a pre snapshot before the run, one scrape per source every
// interval_s during it on an absolute schedule (tick k due at start + k·interval), and a post
// snapshot after the drain. A tick due while the source's previous scrape is still running — or
// already past when the loop wakes — is skipped and counted, never made up in a burst. Every
// scrape records its lag and duration and, on failure, its classified error; the run never waits
// on or fails because of a scrape. Nothing grows with the run's length beyond 16 bytes a tick:
// each scrape's rows are streamed to server-metrics.csv and server-scrapes.csv as it
// arrives, and folded into a ScrapeSummary; its parsed series and text are then dropped (unless
// `keepRecords` asks for every record, as the tests that compare the two paths do).
import { join } from 'node:path';
import { ScrapeSummary } from '../../figures/server/summary.js';
import type { ScrapeRecord, SourceResult } from '../../figures/server/types.js';
import { writeFileAtomic } from '../../shared/atomic-file.js';
import type { Clock } from '../../shared/clock.js';
import type { Plan, ScrapeTarget } from '../../shared/plan.js';
import type { FetchOutcome } from './fetch.js';
import { fetchExposition, scrapeDispatcher } from './fetch.js';
import { ServerMetricsCsvWriter } from './server-metrics-csv.js';
import { ServerScrapesCsvStream } from './server-scrapes-csv.js';

/** Snapshots get this long; interval scrapes min(this, SCRAPE_TIMEOUT_SHARE × interval). */
export const SCRAPE_TIMEOUT_MAX_MS = 2000;
/** An interval scrape must end before its next tick is due, with room for the timer to fire. */
export const SCRAPE_TIMEOUT_SHARE = 0.8;

/** The timeout of an interval scrape of a source scraped every `intervalS`. */
export function tickTimeoutMs(intervalS: number): number {
  return Math.round(Math.min(SCRAPE_TIMEOUT_MAX_MS, SCRAPE_TIMEOUT_SHARE * intervalS * 1000));
}

interface SourceState {
  index: number;
  target: ScrapeTarget;
  result: SourceResult;
  inFlight: Promise<void> | null;
  timer: NodeJS.Timeout | null;
  nextTick: number;
}

/** Options of a Scraper. */
export interface ScraperOptions {
  /** The run's plan: its classes and windows shape the summary's figures (none without it). */
  plan?: Plan;
  /** Keep every record with its parsed series (memory grows with the run): for tests and debugging. */
  keepRecords?: boolean;
}

/** Scrapes a run's sources; summary() feeds run.json's `server` block and the gates. */
export class Scraper {
  private readonly sources: SourceState[];
  private readonly dispatcher = scrapeDispatcher();
  private readonly csv: ServerMetricsCsvWriter;
  private readonly scrapesCsv: ServerScrapesCsvStream;
  private readonly sum: ScrapeSummary;
  private readonly keepRecords: boolean;
  /** Records taken before the run start is known (the pre snapshot): their times shift with it. */
  private early: { s: SourceState; r: ScrapeRecord; startNs: bigint }[] = [];
  private runStartNs: bigint | null = null;
  /** Run clock domain minus coordinator clock: added to every unix_ns written. */
  private domainOffsetNs = 0n;
  private stopped = false;
  private closing: Promise<void> | null = null;

  constructor(
    targets: readonly ScrapeTarget[],
    private readonly dir: string,
    private readonly clock: Clock,
    opts: ScraperOptions = {},
  ) {
    this.sources = targets.map((target, index) => ({
      index,
      target,
      result: { name: target.name, url: target.url, intervalS: target.interval_s, records: [], skippedTicks: 0 },
      inFlight: null,
      timer: null,
      nextTick: 0,
    }));
    this.csv = new ServerMetricsCsvWriter(join(dir, 'server-metrics.csv'));
    this.scrapesCsv = new ServerScrapesCsvStream(join(dir, 'server-scrapes.csv'), targets.length);
    this.sum = new ScrapeSummary(
      opts.plan ?? null,
      targets.map((t) => ({ name: t.name, url: t.url, intervalS: t.interval_s })),
    );
    this.keepRecords = opts.keepRecords ?? false;
  }

  /** Scrapes every source once and writes `<source>.<kind>.prom` (the raw text, or why there is none). */
  async snapshot(kind: 'pre' | 'post'): Promise<void> {
    await Promise.all(
      this.sources.map(async (s) => {
        const startNs = this.clock.nowNs();
        this.sum.begin(s.index, startNs);
        const out = await fetchExposition(s.target.url, SCRAPE_TIMEOUT_MAX_MS, this.dispatcher, s.target.bearer_token_file);
        this.keep(s, this.record(s, kind, null, startNs, null, out), startNs);
        await writeFileAtomic(join(this.dir, `${s.target.name}.${kind}.prom`), promFileText(s.target.url, out));
      }),
    );
  }

  /** Starts the interval loops; tick 0 is due at `runStartNs` (coordinator clock). */
  start(runStartNs: bigint): void {
    if (this.runStartNs !== runStartNs) this.setRunStart(runStartNs, this.domainOffsetNs);
    for (const s of this.sources) this.schedule(s);
  }

  /**
   * The instant elapsed_s counts from (coordinator clock), and the run clock domain's offset from
   * the coordinator clock, so unix_ns lines up with requests.ndjson. Records already taken follow.
   */
  setRunStart(runStartNs: bigint, domainOffsetNs: bigint): void {
    const shift = domainOffsetNs - this.domainOffsetNs;
    this.runStartNs = runStartNs;
    this.domainOffsetNs = domainOffsetNs;
    for (const s of this.sources)
      for (const r of s.result.records) {
        r.startUnixNs += shift;
        r.elapsedS = Number(r.startUnixNs - domainOffsetNs - runStartNs) / 1e9;
      }
    // With keepRecords the early records are among those just shifted.
    if (!this.keepRecords)
      for (const e of this.early) {
        e.r.startUnixNs += shift;
        e.r.elapsedS = Number(e.r.startUnixNs - domainOffsetNs - runStartNs) / 1e9;
      }
    this.flushEarly();
    this.sum.setRunStart(runStartNs);
  }

  /** Stops the interval loops and waits for scrapes in flight (each bounded by its timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const s of this.sources) if (s.timer) clearTimeout(s.timer);
    await Promise.all(this.sources.map((s) => s.inFlight));
  }

  /** Closes server-metrics.csv, writes server-scrapes.csv, closes the pool (once; later calls wait for the first). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.stop();
      await this.csv.close();
      this.flushEarly();
      await this.scrapesCsv.close();
      await this.dispatcher.close().catch(() => {});
    })();
    return this.closing;
  }

  /** Every record so far, per source — with `keepRecords` only (otherwise records stay empty). */
  results(): SourceResult[] {
    return this.sources.map((s) => s.result);
  }

  /** What the run's end reads: the server block, the fairness ids seen, the live view's latest series. */
  summary(): ScrapeSummary {
    return this.sum;
  }

  // One finished scrape: its row streamed (once its times are final), its figures folded in.
  private keep(s: SourceState, r: ScrapeRecord, startNs: bigint): void {
    if (this.keepRecords) s.result.records.push(r);
    if (this.runStartNs === null) this.early.push({ s, r, startNs });
    else this.scrapesCsv.row(s.index, r);
    this.sum.add(s.index, r, startNs);
  }

  private flushEarly(): void {
    for (const e of this.early) this.scrapesCsv.row(e.s.index, e.r);
    this.early = [];
  }

  private intervalNs(s: SourceState): bigint {
    return BigInt(Math.round(s.target.interval_s * 1e9));
  }

  private schedule(s: SourceState): void {
    if (this.stopped || this.runStartNs === null) return;
    const dueNs = this.runStartNs + BigInt(s.nextTick) * this.intervalNs(s);
    const delayMs = Math.max(0, Number(dueNs - this.clock.nowNs()) / 1e6);
    s.timer = setTimeout(() => this.fire(s), delayMs);
  }

  // The latest tick due now is scraped unless the previous scrape still runs; earlier ones it
  // overtook are skipped.
  private fire(s: SourceState): void {
    if (this.stopped || this.runStartNs === null) return;
    const nowNs = this.clock.nowNs();
    const k = nowNs < this.runStartNs ? -1 : Number((nowNs - this.runStartNs) / this.intervalNs(s));
    if (k < s.nextTick) {
      this.schedule(s); // the timer woke a little before the clock's due time
      return;
    }
    const skipped = k - s.nextTick + (s.inFlight ? 1 : 0);
    s.result.skippedTicks += skipped;
    this.sum.skipped(s.index, skipped);
    s.nextTick = k + 1;
    if (!s.inFlight) {
      const dueNs = this.runStartNs + BigInt(k) * this.intervalNs(s);
      s.inFlight = this.tick(s, k, dueNs).finally(() => {
        s.inFlight = null;
      });
    }
    this.schedule(s);
  }

  private async tick(s: SourceState, k: number, dueNs: bigint): Promise<void> {
    const startNs = this.clock.nowNs();
    this.sum.begin(s.index, startNs);
    const out = await fetchExposition(s.target.url, tickTimeoutMs(s.target.interval_s), this.dispatcher, s.target.bearer_token_file);
    const r = this.record(s, 'tick', k, startNs, Number(startNs - dueNs) / 1e6, out);
    this.keep(s, r, startNs);
    if (r.series) this.csv.scrape(r.elapsedS, r.startUnixNs, s.target.name, r.series);
  }

  private record(
    s: SourceState,
    kind: ScrapeRecord['kind'],
    tick: number | null,
    startNs: bigint,
    lagMs: number | null,
    out: FetchOutcome,
  ): ScrapeRecord {
    const endNs = this.clock.nowNs();
    return {
      source: s.target.name,
      kind,
      tick,
      startUnixNs: startNs + this.domainOffsetNs,
      elapsedS: this.runStartNs === null ? 0 : Number(startNs - this.runStartNs) / 1e9,
      lagMs: lagMs === null ? null : Math.round(lagMs * 1000) / 1000,
      durationMs: Math.round((Number(endNs - startNs) / 1e6) * 1000) / 1000,
      httpStatus: out.httpStatus,
      error: out.error,
      series: out.series,
      families: out.families,
    };
  }
}

/** A .prom snapshot: the text as served, after a comment saying why the scrape failed if it did. */
export function promFileText(url: string, out: FetchOutcome): string {
  if (out.error === null && out.text !== null) return out.text;
  const why = `# loadfleet: scrape of ${url} failed (${out.error?.kind}): ${out.error?.message.replace(/\n/g, ' ')}\n`;
  return `${why}${out.text ?? ''}`;
}
