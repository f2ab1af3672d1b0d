// suite: alone
// (Alone: how often the closed loop is full is a share a neighbour's load moves.)
// `agent --workers 2`: each agent stripes its share over two worker threads. The fleet must still
// send exactly the global schedule, hold closed-loop concurrency exactly, and merge the threads'
// interval and run histograms like any other agent's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../shared/plan.js';
import { buildSchedule } from '../shared/schedule.js';
import { onlyRunDir, readRequests, readRunJson, runCoordinator, tempDir, writePlan } from './harness.js';

const PLAN: Plan = {
  schema: 'loadfleet.plan/v1',
  name: 'e2e-workers',
  seed: 5,
  duration_s: 4,
  drain_timeout_s: 10,
  classes: [
    {
      name: 'open',
      prompt: { input_tokens: 32, output_tokens: 8, ignore_eos: true },
      load: { model: 'poisson', phases: [{ start_s: 0, duration_s: 4, rate_per_s: 30 }] },
    },
    {
      name: 'closed',
      prompt: { input_tokens: 32, output_tokens: 16, ignore_eos: true },
      load: { model: 'concurrency', phases: [{ start_s: 0, duration_s: 3, concurrency: 7 }] },
    },
  ],
};

describe('agent --workers 2', () => {
  let run: any;
  let rows: any[];
  let dir: string;

  beforeAll(async () => {
    const work = tempDir();
    const res = await runCoordinator([
      '--agents',
      '2',
      '--plan',
      writePlan(work, PLAN),
      '--out',
      join(work, 'out'),
      '--agent-arg=--workers=2',
      '--sim-arg=--ttft-ms=20',
      '--sim-arg=--itl-ms=5',
    ]);
    expect(res.code, res.stderr).toBe(0);
    dir = onlyRunDir(join(work, 'out'));
    run = readRunJson(dir);
    rows = readRequests(dir);
  });

  it('sends exactly the global schedule over 2 agents × 2 threads', () => {
    expect(run.agents.map((a: any) => a.workers)).toEqual([2, 2]);
    const planned = buildSchedule(PLAN).classes[0]!.arrivalsNs.length;
    const open = rows.filter((r) => r.class === 'open');
    expect(open).toHaveLength(planned);
    expect(new Set(open.map((r) => r.request_index)).size).toBe(planned);
    expect(run.offered_schedule_matches).toBe(true);
    expect(run.failed).toBe(0);
    expect(run.agents.map((a: any) => a.requests).reduce((x: number, y: number) => x + y, 0)).toBe(rows.length);
  });

  it('holds the closed-loop target exactly: never more than 7 in flight, 7 most of the time', () => {
    const closed = rows.filter((r) => r.class === 'closed');
    const start = BigInt(run.started_at_unix_ns);
    const inFlightAt = (s: number): number => {
      const t = start + BigInt(Math.round(s * 1e9));
      return closed.filter((r) => r.sent_unix_ns <= t && r.done_unix_ns > t).length;
    };
    const samples = Array.from({ length: 25 }, (_, i) => inFlightAt(0.3 + i * 0.1));
    expect(Math.max(...samples)).toBe(7);
    expect(samples.filter((n) => n === 7).length).toBeGreaterThanOrEqual(20);
    expect(new Set(closed.map((r) => r.request_index)).size).toBe(closed.length);
  });

  it("merges the threads' intervals: traffic.csv and the run histograms count every request once", () => {
    const traffic = readFileSync(join(dir, 'traffic.csv'), 'utf8').trim().split('\n').slice(1);
    for (const cls of ['open', 'closed']) {
      const issued = traffic.filter((l) => l.split(',')[1] === cls).reduce((s, l) => s + Number(l.split(',')[4]), 0);
      expect(issued).toBe(run.classes[cls].requests);
      expect(run.classes[cls].windows.all.e2e_samples).toBe(run.classes[cls].completed);
    }
    expect(run.histograms.max_relative_error_vs_exact).toBeLessThan(0.001);
  });
});
