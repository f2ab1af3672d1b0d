import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { addMetricsOptions, liveConsole, openMetrics } from './cli.js';
import { EXPOSITION_CONTENT_TYPE } from './exposition.js';
import type { MetricsEndpoint } from './metrics-server.js';

function sink(isTTY: boolean): { out: string[]; write(s: string): boolean; isTTY: boolean; columns: number; rows: number } {
  const out: string[] = [];
  return { out, write: (s) => out.push(s) > 0, isTTY, columns: 80, rows: 24 };
}

describe('liveConsole', () => {
  it('prints plain lines when stderr is not a terminal', () => {
    const s = sink(false);
    const con = liveConsole(false, s, 'xterm');
    con.log('hello');
    con.progress('t=1s rt sent 1');
    expect(con.block).toBeUndefined();
    expect(s.out.join('')).toBe('[coordinator] hello\nt=1s rt sent 1\n');
  });

  it('redraws a block on a terminal, and falls back to lines on a dumb one', () => {
    const tty = sink(true);
    const con = liveConsole(false, tty, 'xterm-256color');
    con.block!(['a', 'b']);
    con.block!(['c', 'd']);
    expect(tty.out.join('')).toContain('\x1b[2F');
    expect(liveConsole(false, sink(true), 'dumb').block).toBeUndefined();
  });

  it('prints nothing when quiet but the notice', () => {
    const s = sink(true);
    const con = liveConsole(true, s, 'xterm');
    con.log('hello');
    con.progress('t=1s');
    con.notice('metrics at http://127.0.0.1:1/metrics');
    expect(con.block).toBeUndefined();
    expect(s.out.join('')).toBe('[coordinator] metrics at http://127.0.0.1:1/metrics\n');
  });
});

describe('--metrics-port', () => {
  let endpoint: MetricsEndpoint | undefined;
  afterEach(async () => {
    await endpoint?.close();
    endpoint = undefined;
  });

  function parse(argv: string[]): Record<string, unknown> {
    let opts: Record<string, unknown> = {};
    const cmd = addMetricsOptions(new Command('start').exitOverride().configureOutput({ writeErr: () => {} })).action((o) => {
      opts = o;
    });
    cmd.parse(argv, { from: 'user' });
    return opts;
  }

  it('parses the flags, with 127.0.0.1 as the default host, and refuses a bad port', () => {
    expect(parse(['--metrics-port', '0'])).toEqual({ metricsPort: 0, metricsHost: '127.0.0.1' });
    expect(parse([])).toEqual({ metricsHost: '127.0.0.1' });
    expect(() => parse(['--metrics-port', '70000'])).toThrow(/0\.\.65535/);
  });

  it('port 0 picks a free port, logs it, and serves the current render at /metrics only', async () => {
    const said: string[] = [];
    endpoint = await openMetrics({ metricsPort: 0, metricsHost: '127.0.0.1' }, (l) => said.push(l));
    expect(endpoint!.port).toBeGreaterThan(0);
    expect(said).toEqual([`metrics at http://127.0.0.1:${endpoint!.port}/metrics`]);
    const before = await fetch(endpoint!.url);
    expect(before.status).toBe(200);
    expect(await before.text()).toBe('');
    endpoint!.serve(() => '# TYPE x gauge\nx 1\n');
    const res = await fetch(endpoint!.url);
    expect(res.headers.get('content-type')).toBe(EXPOSITION_CONTENT_TYPE);
    expect(await res.text()).toBe('# TYPE x gauge\nx 1\n');
    expect((await fetch(endpoint!.url.replace('/metrics', '/other'))).status).toBe(404);
    endpoint!.serve(() => {
      throw new Error('broken render');
    });
    expect((await fetch(endpoint!.url)).status).toBe(500);
  });

  it('a port in use is a usage error', async () => {
    endpoint = await openMetrics({ metricsPort: 0, metricsHost: '127.0.0.1' }, () => {});
    await expect(openMetrics({ metricsPort: endpoint!.port, metricsHost: '127.0.0.1' }, () => {})).rejects.toMatchObject({
      code: 'LF_USAGE',
      exitCode: 2,
    });
  });

  it('without --metrics-port nothing listens', async () => {
    expect(await openMetrics({ metricsHost: '127.0.0.1' }, () => {})).toBeUndefined();
  });
});
