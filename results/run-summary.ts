// The summary a user reads when a run ends, answer first: the run's status and at once each SLO
// class's verdict, then per-class counts with goodput beside throughput, and the two validity gates, each with
// what it means — so "slo proof: valid" is never read as "the SLO was met".

import type { ClassVerdict } from '../figures/slo-verdict.js';
import { verdictLine } from '../figures/slo-verdict.js';
import { gateLine } from '../figures/validity/gate-line.js';
import type { Gate } from '../figures/validity/types.js';
import { formatFigure, formatMs } from '../shared/format.js';
import type { Plan } from '../shared/plan.js';

/** What each gate means, in one line a user can hold against its verdict. */
export const GATE_MEANINGS = {
  data_quality: 'whether the measurement itself is sound: schedule kept, server metrics captured, headers and streams intact',
  slo_proof: 'whether the SLO verdicts above can be trusted (open-loop arrivals, nothing cut short), not whether the SLOs were met',
} as const;

interface ClassFigures {
  requests: number;
  completed: number;
  failed: number;
  slo_verdict?: ClassVerdict;
  windows: Record<string, Record<string, unknown>>;
}

/** The summary lines of a written run. */
export function runSummaryLines(input: {
  runId: string;
  dir: string;
  status: string;
  reason: string | null;
  plan: Plan;
  classes: Record<string, unknown>;
  dataQuality: Gate;
  sloProof: Gate;
  /** run.json's server_spans classes, when the run joined the server's spans: where each TTFT went. */
  spans?: Record<string, { windows: Record<string, { where_ttft_went?: string }> }>;
}): string[] {
  // The run line stays first (experiments read their status reason from it); the verdicts follow at once.
  const lines = [`run ${input.runId}: ${input.status}${input.reason ? ` (${input.reason})` : ''}`];
  for (const cls of input.plan.classes) {
    const v = (input.classes[cls.name] as ClassFigures).slo_verdict;
    if (v) lines.push(`  ${verdictLine(cls.name, v)}`);
    // Beside the verdict, where the time went in the window it names (the server's own spans).
    const window = v?.missed_in.find((w) => w !== 'all') ?? 'all';
    const where = v && input.spans?.[cls.name]?.windows[window]?.where_ttft_went;
    if (where) lines.push(`    where it went (${window === 'all' ? 'whole run' : window}, the server's spans): ${where}`);
  }
  for (const cls of input.plan.classes) {
    const s = input.classes[cls.name] as ClassFigures;
    const all = s.windows.all ?? {};
    const good =
      all.goodput_rps === undefined
        ? ''
        : `; goodput ${formatFigure(all.goodput_rps as number | null, 'req/s')} of throughput ${formatFigure(all.throughput_rps as number | null, 'req/s')}`;
    const windowParts = Object.entries(s.windows).map(([w, m]) => `${w} ${formatMs(m.ttft_p95_ms as number | null)}`);
    lines.push(
      `  ${cls.name}: ${formatFigure(s.requests)} requests, ${formatFigure(s.completed)} ok, ${formatFigure(s.failed)} failed${good}; p95 TTFT ${windowParts.join(', ')}`,
    );
  }
  lines.push(`${gateLine('data quality', input.dataQuality)} — ${GATE_MEANINGS.data_quality}`);
  lines.push(`${gateLine('slo proof', input.sloProof)} — ${GATE_MEANINGS.slo_proof}`);
  lines.push(`  artifacts: ${input.dir}`);
  return lines;
}
