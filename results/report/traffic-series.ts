// Offered vs achieved traffic per class from traffic.csv: what the global schedule asked for in
// each second next to what the agents sent and what finished.
import { num, parseCsv } from '../../shared/csv.js';

/** One class's traffic over time; x is the middle of each 1 s interval, in seconds since the run start. */
export interface ClassTraffic {
  cls: string;
  /** True when the class is driven by a concurrency target rather than an arrival rate. */
  closedLoop: boolean;
  /** Schedule arrivals per second (open loop) or the target concurrency (closed loop). */
  target: [number, number][];
  issued: [number, number][];
  completed: [number, number][];
  outstanding: [number, number][];
}

/** traffic.csv grouped by class, in the order classes first appear. */
export function trafficByClass(csvText: string): ClassTraffic[] {
  const byClass = new Map<string, ClassTraffic>();
  for (const r of parseCsv(csvText)) {
    const s = num(r.elapsed_s);
    const cls = r.class;
    if (s === null || !cls) continue;
    let t = byClass.get(cls);
    if (!t) {
      t = { cls, closedLoop: false, target: [], issued: [], completed: [], outstanding: [] };
      byClass.set(cls, t);
    }
    const x = s + 0.5;
    const rate = num(r.target_rate_per_s);
    const conc = num(r.target_concurrency);
    if (conc !== null) t.closedLoop = true;
    const target = rate ?? conc;
    if (target !== null) t.target.push([x, target]);
    push(t.issued, x, num(r.issued));
    push(t.completed, x, num(r.completed));
    push(t.outstanding, x, num(r.outstanding));
  }
  return [...byClass.values()];
}

function push(list: [number, number][], x: number, y: number | null): void {
  if (y !== null) list.push([x, y]);
}
