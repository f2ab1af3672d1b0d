// The server line of the live view from whatever the scraper recorded: each source's latest good
// scrape, running and waiting summed across sources (two replicas run twice as much), saturation
// the largest (it is per pool, never summed). Names come in from the caller (current name first,
// then older ones), so this reads any scraper that keeps parsed series per scrape.
import type { ServerSample, ServerSource } from './state.js';

/** A parsed series as a scrape recorded it. */
export interface ScrapedSeries {
  name: string;
  value: number;
}

/** One source's scrapes, oldest first; `series` is null for a scrape that failed. */
export interface ScrapedSource {
  records: readonly { series: readonly ScrapedSeries[] | null }[];
}

/** The metric names each figure is read from, the current name first. */
export interface ServerSignalNames {
  running: readonly string[];
  waiting: readonly string[];
  saturation: readonly string[];
}

/** The latest sample across `sources`; null when no source has a good scrape yet. */
export function latestServerSample(sources: readonly ScrapedSource[], names: ServerSignalNames): ServerSample | null {
  const latest = sources.flatMap((s) => {
    for (let i = s.records.length - 1; i >= 0; i--) {
      const series = s.records[i]!.series;
      if (series !== null) return [series];
    }
    return [];
  });
  if (latest.length === 0) return null;
  const running = latest.map((series) => firstAlias(series, names.running));
  const waiting = latest.map((series) => firstAlias(series, names.waiting));
  const saturation = latest.map((series) => firstAlias(series, names.saturation));
  return {
    running: combine(running, (vs) => vs.reduce((a, b) => a + b, 0)),
    waiting: combine(waiting, (vs) => vs.reduce((a, b) => a + b, 0)),
    saturation: combine(saturation, (vs) => Math.max(...vs)),
  };
}

/** A ServerSource over a scraper's live results. */
export function serverSource(results: () => readonly ScrapedSource[], names: ServerSignalNames): ServerSource {
  return { latestServer: () => latestServerSample(results(), names) };
}

// The values of the first alias the scrape exposes (NaN left out); null when it has none.
function firstAlias(series: readonly ScrapedSeries[], aliases: readonly string[]): number[] | null {
  for (const name of aliases) {
    const values = series.filter((s) => s.name === name).map((s) => s.value);
    if (values.length > 0) return values.filter((v) => !Number.isNaN(v));
  }
  return null;
}

function combine(perSource: readonly (number[] | null)[], reduce: (vs: number[]) => number): number | null {
  const values = perSource.flatMap((v) => v ?? []);
  return perSource.every((v) => v === null) || values.length === 0 ? null : reduce(values);
}
