// Pure: what comparison.json and the report say of a baseline from another tool: where it came
// from, how each figure was mapped, and what its data lets the verdict mean.
import type { ForeignBaseline } from './types.js';

/** comparison.json's baseline.source. */
export function baselineSource(fb: ForeignBaseline, file: string) {
  return {
    format: fb.format,
    tool: fb.tool,
    version: fb.version,
    file,
    data: fb.data,
    order: fb.order,
    requests: fb.total,
    failed: fb.failed,
    excluded: fb.excluded,
    figures: fb.figures,
    load: fb.load,
  };
}

/** The one-run limit compareRuns writes, which a baseline from another tool restates in its own terms. */
export const ONE_RUN_LIMIT = /^one run (a side|on the (baseline|candidate) side)/;

/** The limits a baseline from another tool brings, in sentences. */
export function baselineLimits(fb: ForeignBaseline, approximated: readonly string[], candidateRuns: number): string[] {
  const out: string[] = [];
  const tool = `${fb.tool}${fb.version ? ` ${fb.version}` : ''}`;
  const candidate =
    candidateRuns < 2
      ? "the candidate's intervals hold its own noise over time (its requests resampled in blocks) but not run-to-run variation, which can be larger"
      : "the candidate's repeats give its run-to-run variation";
  if (fb.data === 'aggregate') {
    out.push(
      `the baseline (${tool}) gives aggregates only, no request of its own: each of its figures is compared as a fixed point, so its own sampling variation is in no interval and the false-alarm rate is not held at the stated level (it is higher, by as much as the baseline's own noise would have widened the intervals); ${candidate}; save the baseline per request (vLLM --save-detailed, GuideLLM's requests, AIPerf's profile_export.jsonl) to include it`,
    );
    if (fb.failed === null)
      out.push(
        "the baseline file does not count failed requests: its percentiles are over successes only, and failures cannot rank +∞ on the baseline's side",
      );
  } else {
    const order =
      fb.order === 'send-time'
        ? "sorted by the file's send times"
        : 'in the order the file lists them, which is the order the tool issued them';
    out.push(
      `the baseline (${tool}) is read per request: its ${fb.total} requests are resampled in blocks of consecutive requests ${order}, like a loadfleet run of one repeat; ${candidate}, and the baseline's ITL (pooled gaps) is a fixed point`,
    );
  }
  if (approximated.length > 0)
    out.push(
      `${approximated.join(', ')}: read between two of the baseline's percentiles after ranking its ${fb.failed} failed requests last (linear interpolation), not at a percentile the tool computed`,
    );
  if (fb.excluded) out.push(`${fb.excluded.count} baseline request(s) left out: ${fb.excluded.why}`);
  const differ = fb.figures.filter((f) => f.comparable === 'close').map((f) => f.figure);
  if (differ.length > 0)
    out.push(
      `${differ.join(', ')}: measured by ${fb.tool} at slightly different instants than loadfleet (see baseline.source.figures): a change of a few ms may come from the tools, not the server`,
    );
  out.push(
    `the baseline comes from ${fb.tool}, so loadfleet cannot check that it offered the candidate's load (plan and schedule): compare baseline.source.load with the candidate's plan`,
  );
  return [...out, ...fb.limits];
}
