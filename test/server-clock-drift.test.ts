// suite: timing
// The server's clock placed in the run's when it is both shifted and drifting: engine-sim runs
// under libfaketime 250 ms ahead and 500 ppm fast (its wall clock and its monotonic clock alike, so
// its span stamps drift as a real server's would), sending its spans to a run with `traces`. The
// run must find the drift and the offset within the uncertainty it states.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Plan } from '../shared/plan.js';
import { freePort, onlyRunDir, readRunJson, runCoordinator, startNode, tempDir, writePlan } from './harness.js';
import { faketimeUnavailable } from './hosts/faketime.js';
import { skipFor } from './require.js';

const SHIFT_S = 0.25;
const RATE = 1.0005;
const DRIFT_PPM = (RATE - 1) * 1e6;
const SKIP = skipFor("the drifting server's spans", faketimeUnavailable());

let stop: (() => void) | undefined;
afterEach(() => stop?.());

async function fakeClockSim(tracesPort: number): Promise<{ baseUrl: string; startedMs: number }> {
  const startedMs = Date.now();
  const { child } = startNode(
    'sim/main.js',
    ['--port', '0', '--ttft-ms', '5', '--itl-ms', '2', '--otlp-traces-endpoint', `http://127.0.0.1:${tracesPort}/v1/traces`],
    { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' },
    ['faketime', '-f', `+${SHIFT_S} x${RATE}`],
  );
  // faketime runs engine-sim as its child: end that child too, or it outlives the suite.
  stop = () => {
    spawnSync('pkill', ['-TERM', '-P', String(child.pid)]);
    child.kill('SIGTERM');
  };
  const line = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      const nl = buf.indexOf('\n');
      if (nl !== -1) resolve(buf.slice(0, nl));
    });
    child.once('exit', (code) => reject(new Error(`engine-sim exited ${code}`)));
  });
  return { baseUrl: (JSON.parse(line) as { base_url: string }).base_url, startedMs };
}

describe.skipIf(SKIP)('a server clock shifted and drifting (faketime on engine-sim)', () => {
  it('is fitted within its stated uncertainty: the offset and the drift', { timeout: 120_000 }, async () => {
    const [http, grpc] = [await freePort(), await freePort()];
    const sim = await fakeClockSim(http);
    const work = tempDir();
    const plan: Plan = {
      schema: 'loadfleet.plan/v1',
      name: 'drifting-server',
      seed: 5,
      duration_s: 20,
      drain_timeout_s: 5,
      target: { base_url: sim.baseUrl, api: 'chat', model: 'loadfleet-sim', timeout_s: 10 },
      traces: { http: `127.0.0.1:${http}`, grpc: `127.0.0.1:${grpc}`, flush_s: 10 },
      classes: [
        {
          name: 'c',
          prompt: { input_tokens: 16, output_tokens: 4 },
          load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 20, rate_per_s: 8 }] },
        },
      ],
    };
    const res = await runCoordinator(['--agents', '1', '--plan', writePlan(work, plan), '--out', join(work, 'out'), '--quiet']);
    expect(res.code, res.stderr).toBe(0);
    const endedMs = Date.now();
    const run = readRunJson(onlyRunDir(join(work, 'out')));
    expect(run.server_spans.requests_without_span).toBe(0);
    const clock = run.server_spans.clocks['engine-sim'];
    console.log(`drifting server: ${JSON.stringify(clock)}`);
    expect(clock).toMatchObject({ kind: 'fitted', model: 'line' });
    // The drift: 500 ppm, within the stated uncertainty (and that uncertainty small enough to say so).
    expect(clock.drift_uncertainty_ppm).toBeLessThan(DRIFT_PPM / 2);
    expect(Math.abs(clock.drift_ppm - DRIFT_PPM)).toBeLessThanOrEqual(clock.drift_uncertainty_ppm);
    // The offset, at the middle of the run's requests: the shift, plus what the fast clock gained
    // from engine-sim's start to that moment (somewhere between its start and the run's end).
    const offsetMs = clock.offset_ns / 1e6;
    const slackMs = clock.offset_uncertainty_ns / 1e6;
    const gainedMaxMs = (endedMs - sim.startedMs) * (RATE - 1);
    expect(offsetMs).toBeGreaterThanOrEqual(SHIFT_S * 1000 - slackMs);
    expect(offsetMs).toBeLessThanOrEqual(SHIFT_S * 1000 + gainedMaxMs + slackMs);
  });
});
