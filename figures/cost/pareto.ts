// Pure: the throughput–interactivity Pareto front over loads (sweep stages) or configurations
// (experiment arms), as vLLM, AIPerf and InferenceX draw it: x = output tokens/s per user (what
// one stream sees), y = output tokens/s per accelerator (what the hardware yields). Both are
// better higher; a point is on the front when no other point is at least as good on both and
// better on one. Among the points that met the SLO, the front is the usable frontier.

/** One candidate point. */
export interface ParetoInput {
  label: string;
  x: number | null;
  y: number | null;
  /** Whether the point met its SLO (null: no SLO judged it). */
  meets_slo: boolean | null;
  /** Why the point is left out even with coordinates (a client-limited stage), if it is. */
  excluded?: string;
}

/** A plotted point with its place on the fronts. */
export interface ParetoPoint {
  label: string;
  x: number;
  y: number;
  meets_slo: boolean | null;
  on_front: boolean;
  on_slo_front: boolean;
}

/** The fronts of a set of points. */
export interface Pareto {
  x: string;
  y: string;
  points: ParetoPoint[];
  /** Labels on the front over every plotted point, by x ascending. */
  front: string[];
  /** Labels on the front over the points that met the SLO, by x ascending. */
  slo_front: string[];
  not_plotted: { label: string; reason: string }[];
}

/** Whether `q` dominates `p`: at least as good on both axes and better on one. */
export function dominates(q: { x: number; y: number }, p: { x: number; y: number }): boolean {
  return q.x >= p.x && q.y >= p.y && (q.x > p.x || q.y > p.y);
}

/** The indices of the non-dominated points (equal points are all kept), by x ascending then y descending. */
export function nonDominated(points: readonly { x: number; y: number }[]): number[] {
  const keep = points.flatMap((p, i) => (points.some((q) => dominates(q, p)) ? [] : [i]));
  return keep.sort((a, b) => points[a]!.x - points[b]!.x || points[b]!.y - points[a]!.y);
}

/** The fronts of `inputs` on the named axes; points without both coordinates are listed as not plotted. */
export function paretoOf(inputs: readonly ParetoInput[], axes: { x: string; y: string }): Pareto {
  const notPlotted: { label: string; reason: string }[] = [];
  const plotted: ParetoInput[] = [];
  for (const p of inputs) {
    if (p.excluded) notPlotted.push({ label: p.label, reason: p.excluded });
    else if (p.x === null || p.y === null || !Number.isFinite(p.x) || !Number.isFinite(p.y))
      notPlotted.push({ label: p.label, reason: `no ${p.x === null ? axes.x : axes.y}` });
    else plotted.push(p);
  }
  const xy = plotted.map((p) => ({ x: p.x!, y: p.y! }));
  const front = nonDominated(xy);
  const sloIdx = plotted.flatMap((p, i) => (p.meets_slo === true ? [i] : []));
  const sloFront = nonDominated(sloIdx.map((i) => xy[i]!)).map((k) => sloIdx[k]!);
  return {
    x: axes.x,
    y: axes.y,
    points: plotted.map((p, i) => ({
      label: p.label,
      x: p.x!,
      y: p.y!,
      meets_slo: p.meets_slo,
      on_front: front.includes(i),
      on_slo_front: sloFront.includes(i),
    })),
    front: front.map((i) => plotted[i]!.label),
    slo_front: sloFront.map((i) => plotted[i]!.label),
    not_plotted: notPlotted,
  };
}

/** One sentence per field of a `pareto` section (keys relative to it). */
export const PARETO_DEFINITIONS: Record<string, string> = {
  'pareto.x':
    'the interactivity axis: output_tok_s_per_user, 1000 / the p50 TPOT in ms, the decode rate the median request saw (higher is better)',
  'pareto.y':
    'the throughput axis: output_tok_s_per_accelerator (output tokens/s of every class / accelerators.count), or output_tok_s (the whole deployment) when some point has no accelerator count (higher is better)',
  'pareto.points':
    'every point with both coordinates: its label, x, y, whether it met the SLO (null: not judged), and whether it is on each front',
  'pareto.front':
    'labels of the points no other point beats on both axes (at least as good on both and better on one), by x ascending: the best throughput at each interactivity',
  'pareto.slo_front': 'the same front over only the points that met the SLO: the usable frontier',
  'pareto.not_plotted': 'points left out and why (a figure missing, or a stage that says nothing about the server)',
};
