// A run's report.html from what its directory holds: run.json for the header, the other artifacts
// for the charts. Pure: parsed inputs in, one HTML string out.
import type { Obj } from './fields.js';
import { arr, numOrNull, obj, strOrNull } from './fields.js';
import { page } from './html.js';
import type { RunChartData } from './run-charts.js';
import { runCharts } from './run-charts.js';
import { planWindows, runHeader } from './run-header.js';

/** run.json plus the chart data read from the other files (null where a file is absent). */
export type RunReportInput = { run: Obj } & Pick<RunChartData, 'ttft' | 'traffic' | 'server' | 'lag'> &
  Partial<Pick<RunChartData, 'ttftByIntended'>>;

/** The whole run report page. */
export function renderRunReport(input: RunReportInput): string {
  const { run } = input;
  const plan = obj(run.plan);
  const classes = arr(plan.classes).flatMap((c) => {
    const name = strOrNull(obj(c).name);
    return name === null ? [] : [name];
  });
  const charts = runCharts({
    classes: classes.length > 0 ? classes : Object.keys(obj(run.classes)),
    windows: planWindows(run),
    durationS: numOrNull(plan.duration_s) ?? 0,
    // The last request's end: the time axes reach it, and the span after the plan is the drain.
    endS: numOrNull(run.wall_clock_ms) === null ? null : numOrNull(run.wall_clock_ms)! / 1000,
    ttft: input.ttft,
    ttftByIntended: input.ttftByIntended ?? null,
    traffic: input.traffic,
    server: input.server,
    lag: input.lag,
  });
  return page(`loadfleet run ${strOrNull(run.run_id) ?? ''}`, `${runHeader(run)}${charts}`);
}
