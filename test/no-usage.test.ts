// A server that streams content but never sends usage (many gateways, providers and mock servers):
// by default its clean streams are ok requests with TTFT and e2e, output counted from chunks and
// said per request, per-token figures left empty; with target.require_usage they are failures.
import { createServer, request, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../shared/plan.js';
import { runPlanToEnd, startSim, tempDir } from './harness.js';
import { tinyCount, writeTinyTokenizer } from './tiny-tokenizer.js';

function plan(baseUrl: string, requireUsage: boolean, tokenizer?: string): Plan {
  return {
    schema: 'loadfleet.plan/v1',
    name: 'no-usage',
    seed: 9,
    duration_s: 2,
    drain_timeout_s: 5,
    target: {
      base_url: baseUrl,
      api: 'chat',
      model: 'loadfleet-sim',
      timeout_s: 5,
      ...(requireUsage ? { require_usage: true } : {}),
      ...(tokenizer ? { tokenizer } : {}),
    },
    classes: [
      {
        name: 'rt',
        prompt: { input_tokens: 40, output_tokens: 12 },
        slo: { ttft_p95_ms: 1000 },
        load: { model: 'constant-rate', phases: [{ start_s: 0, duration_s: 2, rate_per_s: 5 }] },
      },
    ],
  };
}

// One run of `p` on 2 local agents that must exit 0: its run.json and rows.
const run = (p: Plan) => runPlanToEnd(p, ['--agents', '2']);

describe('a server that never sends usage', () => {
  let sim: { baseUrl: string; stop(): void };
  beforeAll(async () => {
    sim = await startSim(['--fault', 'no-usage-rate=1', '--reasoning-tokens', '2', '--ttft-ms', '10', '--itl-ms', '4']);
  });
  afterAll(() => sim?.stop());

  it('gives ok requests with TTFT and e2e, output counted from chunks and said per request', async () => {
    const { run: r, rows } = await run(plan(sim.baseUrl, false));
    expect(rows).toHaveLength(10);
    for (const row of rows) {
      expect(row).toMatchObject({ status: 'ok', prompt_tokens: null, completion_tokens: 12, output_token_source: 'chunks' });
      expect(row.reasoning_chunks + row.content_chunks).toBe(12);
    }
    const all = r.classes.rt.windows.all;
    expect(all.ttft_samples).toBe(10);
    expect(all.e2e_samples).toBe(10);
    // A chunk count is not a token count: no per-token figure is computed from it.
    expect(all.tpot_samples).toBe(0);
    expect(all.ntpot_samples).toBe(0);
    expect(r.status).toBe('completed');
    expect(r.metric_population.output_token_sources).toEqual({ usage: 0, tokenizer: 0, chunks: 10 });
    expect(r.classes.rt.output_token_sources).toEqual({ usage: 0, tokenizer: 0, chunks: 10 });
    const counts = r.data_quality.checks.find((c: any) => c.name === 'output_token_counts');
    expect(counts).toMatchObject({ status: 'pass', evidence: { estimated_share: 1 } });
    const integrity = r.data_quality.checks.find((c: any) => c.name === 'stream_integrity');
    expect(integrity.status).toBe('pass');
    // Without usage the prompt length is known from the calibration against the server's /tokenize.
    expect(r.classes.rt).toMatchObject({ prompt_length_method: 'server-tokenize', calibrated_prompt_tokens: 40 });
    const shape = r.data_quality.checks.find((c: any) => c.name === 'request_shape');
    expect(shape.status).toBe('pass');
  });

  it('with a tokenizer file on the agents, the streamed text is counted with it, and per-token figures follow', async () => {
    const tokenizer = writeTinyTokenizer(join(tempDir(), 'model'));
    const { run: r, rows } = await run(plan(sim.baseUrl, false, tokenizer));
    // engine-sim streams "think " twice, then "tok " ten times; the tiny tokenizer counts them its own way.
    const expected = tinyCount('think think ') + tinyCount('tok '.repeat(10));
    expect(expected).not.toBe(12);
    for (const row of rows) expect(row).toMatchObject({ status: 'ok', completion_tokens: expected, output_token_source: 'tokenizer' });
    expect(r.metric_population.output_token_sources).toEqual({ usage: 0, tokenizer: 10, chunks: 0 });
    expect(r.classes.rt.windows.all.tpot_samples).toBe(10);
    // The server's own /tokenize still sized the prompts (it is what the server counts).
    expect(r.classes.rt.prompt_length_method).toBe('server-tokenize');
  });

  it('with target.require_usage the same streams are missing_usage failures', async () => {
    const { run: r, rows } = await run(plan(sim.baseUrl, true));
    expect(rows.every((row) => row.status === 'missing_usage' && row.output_token_source === null)).toBe(true);
    expect(r.error_counts).toEqual({ missing_usage: 10 });
    expect(r.status).toBe('degraded');
  });
});

/**
 * A loopback proxy in front of `baseUrl`. `none`: /tokenize answers 404 (a server with no way to
 * count prompts). `fail-bodies`: /tokenize answers the short texts and the long confirmation of a
 * vocabulary search but fails a text of 40 to 400 words — the size of the sampled request bodies
 * counted before load — as a tokenizer that errors or times out mid-calibration would.
 */
function proxy(baseUrl: string, tokenize: 'none' | 'fail-bodies'): Promise<{ baseUrl: string; server: Server }> {
  const upstream = new URL(baseUrl);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.url === '/tokenize') {
        const words = JSON.stringify(JSON.parse(body.toString() || '{}')).split(' ').length;
        if (tokenize === 'none' || (words >= 40 && words <= 400))
          return void res.writeHead(tokenize === 'none' ? 404 : 500, { 'content-type': 'application/json' }).end('{"error":"no"}');
      }
      const up = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, server })),
  );
}

describe('a server that sends no usage and cannot count prompts', () => {
  let sim: { baseUrl: string; stop(): void };
  let none: { baseUrl: string; server: Server };
  let failing: { baseUrl: string; server: Server };
  beforeAll(async () => {
    sim = await startSim(['--fault', 'no-usage-rate=1', '--ttft-ms', '10', '--itl-ms', '4']);
    none = await proxy(sim.baseUrl, 'none');
    failing = await proxy(sim.baseUrl, 'fail-bodies');
  });
  afterAll(() => {
    none?.server.close();
    failing?.server.close();
    sim?.stop();
  });

  function lognormalPlan(baseUrl: string): Plan {
    const p = plan(baseUrl, false);
    const load = p.classes[0]!.load;
    p.classes = [
      p.classes[0]!,
      { name: 'ln', prompt: { input_tokens: { distribution: 'lognormal', mu: 4, sigma: 0.5, min: 16, max: 200 }, output_tokens: 8 }, load },
    ];
    return p;
  }

  it('leaves request_shape not_evaluated with its reason, for a fixed and a lognormal class, and data quality not valid', async () => {
    const { run: r, rows } = await run(lognormalPlan(none.baseUrl));
    expect(rows.filter((row) => row.status === 'ok' && row.prompt_tokens === null)).toHaveLength(rows.length);
    for (const c of ['rt', 'ln']) expect(r.classes[c]).toMatchObject({ prompt_length_method: 'words-unverified', prompt_exactness: null });
    const shape = r.data_quality.checks.find((c: any) => c.name === 'request_shape');
    expect(shape.status).toBe('not_evaluated');
    expect(shape.reason).toMatch(
      /^rt: 10 request\(s\) without usage and a prompt length never counted \(words-unverified\); ln: 10 request\(s\) without usage/,
    );
    expect(r.data_quality.valid).toBe(false);
    expect(r.field_definitions['classes.<class>.prompt_exactness']).toMatch(/template_floor/);
  });

  it('a pre-load count that fails is reported, and request_shape is not_evaluated rather than passed on nothing', async () => {
    const { run: r } = await run(lognormalPlan(failing.baseUrl));
    // The vocabulary was found on the target, so the lognormal class is sized exactly, per request…
    expect(r.classes.ln).toMatchObject({ prompt_length_method: 'server-tokenize', prompt_length_check: null });
    // …but its sampled bodies could not be counted, and the server reports no usage: nothing proves its prompts.
    expect(r.classes.ln.prompt_length_check_error).toMatch(/500/);
    expect(r.classes.ln.prompt_exactness).toMatchObject({ rows: 10, exact_rows: 10, not_exact: [] });
    const shape = r.data_quality.checks.find((c: any) => c.name === 'request_shape');
    expect(shape.status).toBe('not_evaluated');
    expect(shape.reason).toMatch(/ln: 10 request\(s\) without usage, and the pre-load count of sampled bodies failed \(.*500/);
    expect(shape.evidence.classes.ln.prompt_length_check_error).toMatch(/500/);
    // The fixed class's own count failed too (its 40-token bodies): every row sent in words, and said so.
    expect(r.classes.rt.prompt_length_method).toBe('words-unverified');
    expect(r.classes.rt.prompt_exactness).toMatchObject({ rows: 10, exact_rows: 0, not_exact: [{ reason: 'count_failed', rows: 10 }] });
    expect(shape.reason).toMatch(
      /^rt: 10 request\(s\) without usage and a prompt length never counted \(counting on the target failed before load/,
    );
  });
});
