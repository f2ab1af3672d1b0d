// traffic.csv: per second and class, what the schedule asked for next to what was sent, finished
// and still outstanding, so a reader can see whether the offered load was the planned one.
import { AtomicLineStream } from '../../shared/atomic-file.js';

/** One row of traffic.csv. */
export interface TrafficRow {
  elapsed_s: number;
  class: string;
  target_rate_per_s: number | null;
  target_concurrency: number | null;
  issued: number;
  completed: number;
  outstanding: number;
  schedule_lag_p99_ms: number | null;
}

const COLUMNS: (keyof TrafficRow)[] = [
  'elapsed_s',
  'class',
  'target_rate_per_s',
  'target_concurrency',
  'issued',
  'completed',
  'outstanding',
  'schedule_lag_p99_ms',
];

/** Streams traffic rows as CSV (empty cells for values that do not apply). */
export class TrafficCsvWriter {
  private readonly out: AtomicLineStream;

  constructor(path: string) {
    this.out = new AtomicLineStream(path);
    this.out.write(`${COLUMNS.join(',')}\n`);
  }

  /** Appends one row. */
  row(r: TrafficRow): void {
    this.out.write(`${COLUMNS.map((c) => (r[c] === null ? '' : String(r[c]))).join(',')}\n`);
  }

  /** Closes and renames into place. */
  close(): Promise<void> {
    return this.out.close();
  }
}
