// The top of a run's report, from run.json alone: status and reason, the SLO verdict first, a per-class summary table
// (requests, ok, errors, TTFT p50/p95 per window), the validity check lists and the server
// figures when the run recorded them. Keys that are absent are skipped, never invented.

import { GATE_MEANINGS } from '../run-summary.js';
import type { Obj } from './fields.js';
import { arr, boolOrNull, numOrNull, obj, strOrNull } from './fields.js';
import { badge, cellNum, compactJson, table, verdict } from './html.js';
import { formatNumber } from './scale.js';
import { sloSection } from './slo-section.js';
import { esc } from './svg.js';
import { ttftPartsSection } from './ttft-parts.js';

/** The plan's windows (name and range in seconds since the run start). */
export function planWindows(run: Obj): { name: string; start_s: number; end_s: number }[] {
  return arr(obj(run.plan).windows).flatMap((w) => {
    const o = obj(w);
    const name = strOrNull(o.name);
    const start = numOrNull(o.start_s);
    const end = numOrNull(o.end_s);
    return name !== null && start !== null && end !== null ? [{ name, start_s: start, end_s: end }] : [];
  });
}

/** Heading, status, meta line and the sections below it. */
export function runHeader(run: Obj): string {
  return [
    titleBlock(run),
    sloSection(run),
    ttftPartsSection(run),
    classTable(run),
    checksSection(run, 'data_quality', 'Data quality'),
    checksSection(run, 'slo_proof', 'SLO proof'),
    serverTable(run),
  ].join('');
}

function statusTone(status: string | null): 'good' | 'warn' | 'bad' | 'none' {
  return status === 'completed' ? 'good' : status === 'degraded' ? 'warn' : status === 'aborted' ? 'bad' : 'none';
}

function titleBlock(run: Obj): string {
  const status = strOrNull(run.status);
  const plan = obj(run.plan);
  const agents = arr(run.agents);
  const exp = obj(run.experiment);
  const meta = [
    strOrNull(plan.name) && `plan ${strOrNull(plan.name)}`,
    strOrNull(run.started_at) && `started ${strOrNull(run.started_at)}`,
    numOrNull(run.wall_clock_ms) !== null && `${formatNumber(numOrNull(run.wall_clock_ms)! / 1000)} s wall clock`,
    agents.length > 0 && `${agents.length} agent${agents.length === 1 ? '' : 's'}`,
    strOrNull(obj(run.clock).alignment) && `clock: ${strOrNull(obj(run.clock).alignment)}`,
    strOrNull(exp.name) && `experiment ${strOrNull(exp.name)}, arm “${strOrNull(exp.arm) ?? '?'}”, repeat ${numOrNull(exp.repeat) ?? '?'}`,
  ].filter((x): x is string => typeof x === 'string');
  const reason = strOrNull(run.status_reason);
  return [
    `<h1>Run ${esc(strOrNull(run.run_id) ?? '(no run_id)')} ${badge(status ?? 'status unknown', statusTone(status))}</h1>`,
    `<p class="meta">${meta.map((m) => `<span>${esc(m)}</span>`).join('')}</p>`,
    reason ? `<p class="reason"><strong>Reason:</strong> ${esc(reason)}</p>` : '',
  ].join('');
}

function classTable(run: Obj): string {
  const classes = obj(run.classes);
  const names = Object.keys(classes);
  if (names.length === 0) return '';
  const windows = ['all', ...planWindows(run).map((w) => w.name)];
  const ranges = new Map(planWindows(run).map((w) => [w.name, `${formatNumber(w.start_s)}–${formatNumber(w.end_s)} s`]));
  const headers = [
    'class',
    'requests',
    'ok',
    'errors',
    ...windows.map(
      (w) => `${esc(w)}${ranges.has(w) ? ` <small>(${esc(ranges.get(w)!)})</small>` : ''}<br><small>TTFT p50 / p95 ms</small>`,
    ),
  ];
  const rows = names.map((name) => {
    const c = obj(classes[name]);
    const ws = obj(c.windows);
    return [
      `<strong>${esc(name)}</strong>`,
      cellNum(numOrNull(c.requests)),
      cellNum(numOrNull(c.completed)),
      cellNum(numOrNull(c.failed)),
      ...windows.map((w) => {
        const m = obj(ws[w]);
        return `${esc(formatNumber(numOrNull(m.ttft_p50_ms)))} / ${esc(formatNumber(numOrNull(m.ttft_p95_ms)))}`;
      }),
    ];
  });
  return `<h2>Classes</h2>${table(headers, rows)}<p class="definition">Requests dispatched, requests with status ok, and requests with any other status; TTFT (first content token − send) percentiles of the successful requests whose intended send time falls in each window, from run.json.</p>`;
}

function checksSection(run: Obj, key: string, title: string): string {
  if (!(key in run)) return '';
  const block = obj(run[key]);
  const checks = arr(block.checks).map(obj);
  const rows = checks.map((c) => {
    const status = strOrNull(c.status);
    const tone = status === 'pass' ? 'good' : status === 'fail' ? 'bad' : 'none';
    return [
      esc(strOrNull(c.name) ?? '?'),
      badge(status ?? '?', tone),
      `<span class="text">${esc(strOrNull(c.reason) ?? '')}</span>`,
      compactJson(c.evidence),
    ];
  });
  const body = rows.length > 0 ? table(['check', 'status', 'reason', 'evidence'], rows, 'checks') : '<p>No checks recorded.</p>';
  const meaning = GATE_MEANINGS[key as keyof typeof GATE_MEANINGS];
  const scope =
    '<p class="definition">A check not_applicable is one the plan does not call for (its reason says why); it leaves the gate alone. A check not_evaluated applies but lacks its evidence, and keeps the gate from being valid.</p>';
  return `<h2>${esc(title)} ${verdict(boolOrNull(block.valid))}</h2>${meaning ? `<p class="definition">${esc(title)}: ${esc(meaning)}.</p>` : ''}${body}${scope}`;
}

function serverTable(run: Obj): string {
  const server = obj(run.server);
  const windows = obj(server.windows);
  const names = Object.keys(windows);
  if (names.length === 0) return '';
  const defs = obj(server.definitions);
  const figures = [...new Set(names.flatMap((w) => Object.keys(obj(windows[w]))))];
  const rows = figures.map((f) => [
    `<span title="${esc(strOrNull(defs[f]) ?? '')}">${esc(f)}</span>`,
    ...names.map((w) => {
      const v = obj(windows[w])[f];
      return typeof v === 'boolean' ? esc(String(v)) : cellNum(numOrNull(v));
    }),
  ]);
  const defList = figures
    .filter((f) => strOrNull(defs[f]))
    .map((f) => `<li><code>${esc(f)}</code>: ${esc(strOrNull(defs[f])!)}</li>`)
    .join('');
  return `<h2>Server figures</h2>${table(['figure', ...names.map(esc)], rows)}${defList ? `<details><summary>definitions</summary><ul>${defList}</ul></details>` : ''}`;
}
