// The Grafana board in deploy/grafana reads only metrics /metrics really serves (a renamed
// metric would otherwise leave a silently empty panel).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildSchedule } from '../../shared/schedule.js';
import { PLAN } from '../../test/live-fixtures.js';
import { liveFamilies } from './metric-families.js';
import { LiveState } from './state.js';

const BOARD = fileURLToPath(new URL('../../deploy/grafana/loadfleet-live.dashboard.json', import.meta.url));

describe('deploy/grafana/loadfleet-live.dashboard.json', () => {
  const board = JSON.parse(readFileSync(BOARD, 'utf8')) as { panels: { title: string; targets: { expr: string; refId: string }[] }[] };
  const served = new Set(liveFamilies(new LiveState(PLAN, buildSchedule(PLAN), 'r').snapshot(0, [], null)).map((f) => f.name));
  const exprs = board.panels.flatMap((p) => p.targets.map((t) => t.expr));

  it('queries only loadfleet metrics that exist', () => {
    const used = exprs.flatMap((e) => [...e.matchAll(/\bloadfleet_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, '')));
    expect(used.length).toBeGreaterThanOrEqual(10);
    for (const name of used) expect(served, name).toContain(name);
  });

  it('puts each client latency beside the engine’s', () => {
    for (const [client, server] of [
      ['loadfleet_time_to_first_token_seconds', 'vllm:time_to_first_token_seconds'],
      ['loadfleet_e2e_request_latency_seconds', 'vllm:e2e_request_latency_seconds'],
      ['loadfleet_time_per_output_token_seconds', 'vllm:(inter_token_latency|time_per_output_token)_seconds'],
    ]) {
      const panel = board.panels.find((p) => p.targets.some((t) => t.expr.includes(client!)));
      expect(
        panel?.targets.some((t) => t.expr.includes(server!)),
        client,
      ).toBe(true);
    }
  });
});
