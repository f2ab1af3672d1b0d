import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN_JS = join(ROOT, 'dist', 'sim', 'main.js');

// `npm test` builds first; a direct `vitest run` rebuilds only when dist/sim is older than sim/.
function buildIfStale(): void {
  const newestSourceMs = Math.max(...readdirSync(join(ROOT, 'sim')).map((f) => statSync(join(ROOT, 'sim', f)).mtimeMs));
  if (existsSync(MAIN_JS) && statSync(MAIN_JS).mtimeMs >= newestSourceMs) return;
  try {
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', ROOT], { cwd: ROOT, stdio: 'pipe' });
  } catch {
    // Type errors elsewhere in the tree still emit; the existence check below is what matters.
  }
  if (!existsSync(MAIN_JS)) throw new Error(`build did not produce ${MAIN_JS}`);
}

function run(args: string[]): ChildProcess {
  return spawn(process.execPath, [MAIN_JS, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
}

async function firstLine(child: ChildProcess): Promise<string> {
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  lines.close();
  return line;
}

describe('engine-sim CLI', () => {
  beforeAll(buildIfStale, 60_000);

  it('prints one listening line, serves, and exits 0 on SIGTERM', async () => {
    const child = run(['--port', '0', '--model', 'cli-model', '--ttft-ms', '1', '--fault', '5xx-rate=0', '--fault', 'stall-ms=10']);
    const line = JSON.parse(await firstLine(child));
    expect(Object.keys(line)).toEqual(['event', 'url', 'base_url', 'metrics_url', 'model']);
    expect(line.event).toBe('listening');
    expect(line.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(line.base_url).toBe(`${line.url}/v1`);
    expect(line.metrics_url).toBe(`${line.url}/metrics`);
    expect(line.model).toBe('cli-model');
    const models = await request(`${line.base_url}/models`);
    expect(((await models.body.json()) as { data: { id: string }[] }).data[0]!.id).toBe('cli-model');
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });

  it('in gateway mode adds the split metrics URLs and maps objectives from --gateway-config', async () => {
    const config = join(mkdtempSync(join(tmpdir(), 'sim-cli-')), 'gateway.json');
    writeFileSync(config, JSON.stringify({ objectives: { gold: 7 } }));
    const child = run(['--port', '0', '--gateway', '--replicas', '2', '--gateway-config', config]);
    const line = JSON.parse(await firstLine(child));
    expect(Object.keys(line)).toEqual(['event', 'url', 'base_url', 'metrics_url', 'model', 'vllm_metrics_url', 'epp_metrics_url']);
    expect([line.vllm_metrics_url, line.epp_metrics_url]).toEqual([`${line.url}/vllm/metrics`, `${line.url}/epp/metrics`]);
    const res = await request(`${line.base_url}/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-inference-objective': 'gold' },
      body: JSON.stringify({ prompt: 'hi', max_tokens: 2 }),
    });
    await res.body.text();
    const epp = await (await request(line.epp_metrics_url)).body.text();
    expect(epp).toContain('llm_d_epp_flow_control_queue_size{fairness_id="default",priority="7",inference_pool="loadfleet-sim"} 0');
    const vllm = await (await request(line.vllm_metrics_url)).body.text();
    expect(vllm).toContain('vllm:num_requests_running{model_name="loadfleet-sim",engine="1"} 0');
    child.kill('SIGTERM');
    expect((await once(child, 'exit'))[0]).toBe(0);
  });

  it('exits 2 with a message on stderr for invalid flags', async () => {
    const badConfig = join(mkdtempSync(join(tmpdir(), 'sim-cli-')), 'bad.json');
    writeFileSync(badConfig, JSON.stringify({ objectives: { gold: 'high' } }));
    for (const args of [
      ['--port', 'abc'],
      ['--fault', 'slow-rate=0.1'],
      ['--itl-ms', '0'],
      ['--no-such-flag'],
      ['--engine', 'tgi'],
      ['--engine', 'vllm', '--itl-ms', '5'],
      ['--kv-cache-tokens', '100'],
      ['--upstream', 'http://127.0.0.1:1/v1'],
      ['--gateway', '--gateway-config', badConfig],
      ['--gateway', '--gateway-config', '/no/such/file.json'],
    ]) {
      const child = run(args);
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const [code] = await once(child, 'exit');
      expect(code, args.join(' ')).toBe(2);
      expect(stderr.length, args.join(' ')).toBeGreaterThan(0);
    }
  });
});
