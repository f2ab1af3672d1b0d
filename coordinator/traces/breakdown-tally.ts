// Pure: the breakdowns of one class and window folded into run.json's figures — each part's p50
// and p95 over the joined requests, and where the TTFT of the typical and of the slow requests
// went: the parts averaged over the requests whose TTFT ranks near the p50 (45th–55th percentile)
// and near the p95 (92.5th–97.5th), so the bars add up to a TTFT that was measured, not to a sum
// of percentiles (which add up to nothing).
import { type Breakdown, TTFT_PARTS } from './join.js';

/** Parts with percentiles in run.json (the TTFT parts, the network as a whole, decode). */
export const PART_FIELDS = [...TTFT_PARTS, 'network_ms', 'kv_transfer_ms', 'decode_ms'] as const;

/** The requests near one TTFT percentile and their parts, averaged. */
export interface TtftBand {
  ttft_ms: number;
  requests: number;
  parts: Record<(typeof TTFT_PARTS)[number], number | null>;
}

/** run.json server_spans.classes.<class>.windows.<window>: `<part>_p50_ms`, `<part>_p95_ms` and the bands. */
export type BreakdownSummary = {
  joined: number;
  ttft_p50?: TtftBand;
  ttft_p95?: TtftBand;
  /** One sentence: the p95 TTFT and its largest part. */
  where_ttft_went?: string;
} & { [figure: `${string}_ms`]: number | null };

const rank = (sorted: readonly number[], q: number): number | null =>
  sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;

const round3 = (x: number): number => Math.round(x * 1e3) / 1e3;

const PART_WORDS: Record<(typeof TTFT_PARTS)[number], string> = {
  to_server_ms: 'on the way to the server (network and gateway)',
  queue_ms: 'queued',
  prefill_ms: 'in prefill',
  unaccounted_ms: 'in the server but not in its queue or prefill',
  handoff_ms: 'in the prefill-to-decode handoff',
  from_server_ms: 'on the way back from the server',
};

export const fmtMs = (x: number): string => (x >= 1000 ? `${(x / 1000).toFixed(1)} s` : `${x.toFixed(x >= 10 ? 0 : 1)} ms`);

/** One class and window's joined requests. */
export class BreakdownTally {
  private readonly rows: Breakdown[] = [];

  add(b: Breakdown): void {
    this.rows.push(b);
  }

  summary(): BreakdownSummary {
    const out: Record<string, unknown> = { joined: this.rows.length };
    for (const p of PART_FIELDS) {
      const values = this.rows.map((r) => r[p]).filter((v): v is number => v !== null);
      values.sort((a, b) => a - b);
      const name = p.slice(0, -3);
      out[`${name}_p50_ms`] = rank(values, 0.5);
      out[`${name}_p95_ms`] = rank(values, 0.95);
    }
    if (this.rows.length > 0) {
      const byTtft = [...this.rows].sort((a, b) => a.ttft_ms - b.ttft_ms);
      out.ttft_p50 = band(byTtft, 0.5, 0.05);
      out.ttft_p95 = band(byTtft, 0.95, 0.025);
      out.where_ttft_went = whereItWent('p95', out.ttft_p95 as TtftBand);
    }
    return out as BreakdownSummary;
  }
}

// The requests ranked within ±half of quantile q (at least the nearest-rank one), their parts averaged.
function band(sorted: readonly Breakdown[], q: number, half: number): TtftBand {
  const n = sorted.length;
  const at = Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1));
  const lo = Math.min(at, Math.max(0, Math.ceil((q - half) * n) - 1));
  const hi = Math.max(at, Math.min(n - 1, Math.ceil((q + half) * n) - 1));
  const picked = sorted.slice(lo, hi + 1);
  const parts = {} as TtftBand['parts'];
  for (const p of TTFT_PARTS) {
    const vs = picked.map((r) => r[p]).filter((v): v is number => v !== null);
    parts[p] = vs.length === 0 ? null : round3(vs.reduce((a, b) => a + b, 0) / vs.length);
  }
  return { ttft_ms: sorted[at]!.ttft_ms, requests: picked.length, parts };
}

/** "p95 TTFT 10.4 s: 9.6 s of it queued", from a band's largest part. */
export function whereItWent(label: string, b: TtftBand): string {
  let best: (typeof TTFT_PARTS)[number] | null = null;
  for (const p of TTFT_PARTS) if (b.parts[p] !== null && (best === null || b.parts[p]! > b.parts[best]!)) best = p;
  const head = `${label} TTFT ${fmtMs(b.ttft_ms)}`;
  return best === null ? `${head}: its server spans name no part of it` : `${head}: ${fmtMs(b.parts[best]!)} of it ${PART_WORDS[best]}`;
}
