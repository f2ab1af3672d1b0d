// Pure renderings of a live snapshot: the plain progress line (one per second when stderr is
// not a terminal) and the block the terminal view redraws in place.
import { formatFigure, formatMs, formatNum } from '../../shared/format.js';
import type { AgentSnapshot, ClassSnapshot, LiveSnapshot, ServerSample } from './state.js';
import { RECENT_S } from './state.js';

/** Agent rows the terminal block shows at most (the worst by schedule lag first). */
export const MAX_AGENT_ROWS = 6;

const DASH = '—';

/** Red on a terminal: a class whose recent p95 TTFT is past its SLO bound. */
const RED = '\x1b[31m';
const RESET = '\x1b[0m';

/**
 * The plain line, e.g. `t=12s realtime sent 96 inflight 3 ok 92 err 1 p95_ttft 61.2ms | batch …`;
 * a class past its SLO bound says `SLO-MISSED` (no colour: this line is for logs and pipes).
 */
export function progressLine(s: LiveSnapshot): string {
  const parts = s.classes.map((c) => {
    const p95 = c.ttftP95RunMs === null ? '-' : formatMs(c.ttftP95RunMs).replace(' ', '');
    const figure = c.sloFailuresDecide
      ? `failed_${c.sloFailuresDecide.failed}_of_${c.sloFailuresDecide.requests}`
      : formatMs(c.sloP95RecentMs).replace(' ', '');
    const label = (c.sloTtftWords ?? 'p95 TTFT').toLowerCase().replace(/[ .]/g, '_');
    const breach = c.sloBreached ? ` SLO-MISSED(${label}_${RECENT_S}s ${figure} > ${formatMs(c.sloTtftMs).replace(' ', '')})` : '';
    return `${c.name} sent ${formatNum(c.sent)} inflight ${formatNum(c.inFlight)} ok ${formatNum(c.completed)} err ${formatNum(c.failed)} p95_ttft ${p95}${breach}`;
  });
  return `t=${Math.round(s.elapsedS)}s ${parts.join(' | ')}`;
}

/** The terminal block: header, one row per class, one SLO line per class with a TTFT bound, the agents, the server. */
export function liveBlock(s: LiveSnapshot): string[] {
  const live = s.agents.filter((a) => a.state !== 'lost').length;
  const header = `loadfleet ${s.runId}  t ${Math.max(0, Math.round(s.elapsedS))} s of ${s.durationS}  merged ${s.mergedS} s  agents ${live}/${s.agents.length}`;
  return [header, ...classTable(s.classes), ...sloLines(s.classes), ...agentTable(s.agents), serverLine(s.server)];
}

function classTable(classes: readonly ClassSnapshot[]): string[] {
  const rows = classes.map((c) => [
    c.name,
    c.closedLoop ? `c=${c.targetConcurrency}` : int(c.offered),
    int(c.sent),
    int(c.inFlight),
    int(c.completed),
    int(c.failed),
    ms(c.ttftP95RecentMs),
    ms(c.ttftP95RunMs),
  ]);
  return table(['class', 'offered', 'sent', 'in flight', 'ok', 'errors', `p95 TTFT ${RECENT_S}s`, 'p95 TTFT run'], rows);
}

// One line per class declaring a TTFT bound, below the table (which already fills 80 columns): a
// class whose recent p95 passed its bound turns red and says MISSED, so colour is never the only sign.
// The p95 here ranks failed requests +∞, as the verdict does; more than 5% failed decides it.
function sloLines(classes: readonly ClassSnapshot[]): string[] {
  return classes.flatMap((c) => {
    if (c.sloTtftMs === null) return [];
    const good = c.good === null ? '' : `  goodput ${formatFigure(c.good)} requests so far`;
    const figure = c.sloFailuresDecide
      ? `a failed request (${c.sloFailuresDecide.failed} of ${c.sloFailuresDecide.requests} failed)`
      : ms(c.sloP95RecentMs);
    const words = c.sloTtftWords ?? 'p95 TTFT';
    const verdict = c.sloBreached
      ? `MISSED  ${words} ${RECENT_S}s ${figure} > ${ms(c.sloTtftMs)}`
      : `ok  ${words} ${RECENT_S}s ${figure} ≤ ${ms(c.sloTtftMs)}`;
    const line = `SLO ${c.name}: ${verdict}${good}`;
    return [c.sloBreached ? `${RED}${line}${RESET}` : line];
  });
}

function agentTable(agents: readonly AgentSnapshot[]): string[] {
  // The worst first, so the agent that limits the run is always on screen.
  const sorted = [...agents].sort((a, b) => (b.lagP99Ms ?? -1) - (a.lagP99Ms ?? -1) || a.id.localeCompare(b.id));
  const shown = sorted.slice(0, MAX_AGENT_ROWS);
  const rows = shown.map((a) => [a.id, a.state, ms(a.lagP99Ms), ms(a.lagMaxMs), ms(a.loopP99Ms), ms(a.loopMaxMs)]);
  const lines = table(['agent', 'state', 'lag p99', 'lag max', 'loop p99', 'loop max'], rows, 2);
  if (sorted.length > shown.length) lines.push(`… ${sorted.length - shown.length} more agents (the worst by lag p99 shown)`);
  return lines;
}

function serverLine(server: ServerSample | null): string {
  const sat = server?.saturation;
  return `server  running ${int(server?.running)}  waiting ${int(server?.waiting)}  saturation ${sat == null ? DASH : sat.toFixed(2)}`;
}

// The first `left` columns (names) left-aligned, the figures right-aligned, two spaces apart.
function table(head: readonly string[], rows: readonly string[][], left = 1): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: readonly string[]): string =>
    r
      .map((cell, i) => (i < left ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [fmt(head), ...rows.map(fmt)];
}

function int(n: number | null | undefined): string {
  return n == null ? DASH : formatNum(n);
}

function ms(v: number | null): string {
  return v === null ? DASH : formatMs(v);
}
