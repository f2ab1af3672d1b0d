// End to end: the live view of a real run (coordinator, 2 agents, engine-sim's simple engine).
// /metrics is scraped while the run goes; the terminal view is checked under a pseudo-terminal
// (util-linux `script`), the plain progress lines when stderr is a pipe.
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { constantRatePlan, distPath, type Finished, onlyRunDir, readRunJson, startNode, tempDir, waitFor, writePlan } from './harness.js';
import { type PromText, parsePrometheus, sampleValue } from './prom-parse.js';
import { skipFor } from './require.js';

const SIMPLE = '--sim-arg=--engine=simple';
const SKIP_PTY = skipFor(
  'the pseudo-terminal live-view test',
  spawnSync('script', ['--version']).status === 0 ? null : '`script` not found (apt-get install bsdutils)',
);

interface Scrape {
  atMs: number;
  text: PromText;
}

describe('coordinator /metrics during a run', () => {
  let scrapes: Scrape[] = [];
  let finished: Finished;
  let run: any;
  let port = 0;

  beforeAll(async () => {
    const work = tempDir();
    // 20 req/s for 6 s: enough merged seconds to see the counters grow between scrapes.
    const plan = writePlan(work, constantRatePlan('e2e-live', 6, 20));
    const out = join(work, 'runs');
    const coord = startNode('coordinator/main.js', ['start', '--agents', '2', '--plan', plan, '--out', out, '--metrics-port', '0', SIMPLE]);
    const [, p] = await waitFor(coord.child.stderr!, /metrics at http:\/\/127\.0\.0\.1:(\d+)\/metrics/);
    port = Number(p);
    let exited = false;
    coord.done.then(() => (exited = true));
    const t0 = Date.now();
    while (!exited) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/metrics`);
        expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
        scrapes.push({ atMs: Date.now() - t0, text: parsePrometheus(await res.text()) });
      } catch (err) {
        // Only the end of the process may refuse a scrape.
        if (!exited && !/fetch failed/.test(String(err))) throw err;
      }
      await new Promise((r) => setTimeout(r, 400));
    }
    finished = await coord.done;
    run = readRunJson(onlyRunDir(out));
    scrapes = scrapes.filter((s) => s.text.types.size > 0);
  });

  it('the run completes and printed plain progress lines (stderr is a pipe)', () => {
    expect(finished.code, finished.stderr).toBe(0);
    expect(finished.stderr).toMatch(/^t=\d+s rt sent \d+ inflight \d+ ok \d+ err \d+ p95_ttft (-|\d+\.\dms)$/m);
    expect(finished.stderr).not.toContain('\x1b[');
  });

  it('counters grow while the run goes and never exceed the final counts', () => {
    const sent = scrapes.map((s) => sampleValue(s.text, 'loadfleet_requests_sent_total', { class: 'rt' }) ?? 0);
    const during = sent.filter((v) => v > 0 && v < 120);
    // Scrapes every 0.4 s over a 6 s run: several catch it part way, at rising counts.
    expect(during.length, JSON.stringify(sent)).toBeGreaterThanOrEqual(3);
    expect(new Set(during).size).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < sent.length; i++) expect(sent[i]!).toBeGreaterThanOrEqual(sent[i - 1]!);
    const last = scrapes.at(-1)!.text;
    expect(run.classes.rt.requests).toBe(120);
    expect(sent.at(-1)!).toBeLessThanOrEqual(run.classes.rt.requests);
    expect(sampleValue(last, 'loadfleet_requests_completed_total', { class: 'rt' })!).toBeLessThanOrEqual(run.completed);
    const offered = scrapes.map((s) => sampleValue(s.text, 'loadfleet_requests_offered_total', { class: 'rt' }) ?? 0);
    expect(Math.max(...offered)).toBeGreaterThan(0);
    expect(sampleValue(last, 'loadfleet_run_info', { plan: 'e2e-live' })).toBe(1);
  });

  it('TTFT, TPOT and e2e histograms have counts that match the ok requests merged so far', () => {
    const withData = scrapes.filter((s) => (sampleValue(s.text, 'loadfleet_requests_completed_total', { class: 'rt' }) ?? 0) > 0);
    expect(withData.length).toBeGreaterThanOrEqual(2);
    for (const s of withData) {
      const ok = sampleValue(s.text, 'loadfleet_requests_completed_total', { class: 'rt' })!;
      // Every ok request has a TTFT and an e2e (8 output tokens: a TPOT too), merged in the same seconds.
      expect(sampleValue(s.text, 'loadfleet_time_to_first_token_seconds_count', { class: 'rt' })).toBe(ok);
      expect(sampleValue(s.text, 'loadfleet_e2e_request_latency_seconds_count', { class: 'rt' })).toBe(ok);
      expect(sampleValue(s.text, 'loadfleet_time_per_output_token_seconds_count', { class: 'rt' })).toBe(ok);
      // The simple engine sends its first token after 40 ms: none lands at or below 0.02 s, all below 10 s.
      expect(sampleValue(s.text, 'loadfleet_time_to_first_token_seconds_bucket', { class: 'rt', le: '0.02' })).toBe(0);
      expect(sampleValue(s.text, 'loadfleet_time_to_first_token_seconds_bucket', { class: 'rt', le: '10' })).toBe(ok);
    }
  });

  it('exports each agent’s health from its heartbeats', () => {
    const last = scrapes.at(-1)!.text;
    for (const agent of ['agent-1', 'agent-2']) {
      expect(sampleValue(last, 'loadfleet_agent_up', { agent })).toBe(1);
      expect(sampleValue(last, 'loadfleet_agent_event_loop_delay_p99_seconds', { agent })).toBeGreaterThanOrEqual(0);
      expect(sampleValue(last, 'loadfleet_agent_schedule_lag_p99_seconds', { agent })).toBeGreaterThanOrEqual(0);
    }
  });

  it('the endpoint closes with the coordinator', async () => {
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });
});

describe('live terminal view', () => {
  it.skipIf(SKIP_PTY)('redraws a block in place under a pseudo-terminal', async () => {
    const work = tempDir();
    const plan = writePlan(work, constantRatePlan('e2e-tty', 4, 10));
    const cmd = [
      process.execPath,
      distPath('coordinator/main.js'),
      'start',
      '--agents',
      '1',
      '--plan',
      plan,
      '--out',
      join(work, 'runs'),
      SIMPLE,
    ]
      .map((a) => `'${a}'`)
      .join(' ');
    // `script` gives the coordinator a pseudo-terminal for stderr; the size is set so no line is cut.
    const child = spawn('script', ['-qfec', `stty cols 160 rows 40; TERM=xterm ${cmd}`, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(code, out).toBe(0);
    // ESC shown as ⎋, so the patterns below stay readable.
    const shown = out.replaceAll('\x1b', '⎋');
    const redraws = shown.match(/⎋\[(\d+)F/g) ?? [];
    // One redraw per second of a 4 s run (plus the final one), each moving up over the whole block:
    // header, class head + 1 class, agent head + 1 agent, server = 6 lines.
    expect(redraws.length, out).toBeGreaterThanOrEqual(3);
    expect(new Set(redraws)).toEqual(new Set(['⎋[6F']));
    expect(shown).toContain('⎋[2Kclass');
    expect(shown).toMatch(/⎋\[2Kloadfleet \S+-e2e-tty-\S+ {2}t \d+ s of 4/);
    expect(shown).toMatch(/⎋\[2Krt +\d+ +\d+ +\d+ +\d+ +0 +\d+(\.\d+)? ms +\d+(\.\d+)? ms/);
    // The embedded engine-sim is scraped, so the server line carries its latest sample.
    expect(out).toMatch(/server {2}running \d+ {2}waiting \d+ {2}saturation \d+\.\d\d/);
    expect(out).not.toMatch(/^t=\d+s rt sent/m);
    expect(out).toMatch(/run \S+: (completed|degraded)/);
  });
});
