// The scraper against real loopback HTTP servers: the absolute tick schedule, skipped ticks when
// the loop is late (no catch-up burst), and every failure kind recorded per sample.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anchoredClock } from '../../shared/clock.js';
import { Scraper, tickTimeoutMs } from './scraper.js';

const GOOD = '# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="m"} 3\nother_metric 1\n';
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/good') res.end(GOOD);
    else if (req.url === '/garbled') res.end('<html>not metrics</html>\n');
    else if (req.url === '/500') res.writeHead(500).end('boom');
    // /hang: headers never come
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Scraper', () => {
  it('scrapes on the absolute schedule and writes snapshots and the CSV', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scrape-'));
    const clock = anchoredClock();
    const s = new Scraper([{ name: 'vllm', url: `${base}/good`, interval_s: 0.1 }], dir, clock, { keepRecords: true });
    await s.snapshot('pre');
    s.start(clock.nowNs() + 50_000_000n);
    await sleep(1070);
    await s.stop();
    await s.snapshot('post');
    await s.close();
    const [r] = s.results();
    const ticks = r!.records.filter((x) => x.kind === 'tick');
    // Ticks 0..10 are due within 1.02 s of the start; timers on a shared 2-core machine may
    // fire late, so allow two fewer, but never more than were due.
    expect(ticks.length + r!.skippedTicks).toBeGreaterThanOrEqual(9);
    expect(ticks.length + r!.skippedTicks).toBeLessThanOrEqual(11);
    // Every due tick is either scraped or counted as skipped, each once.
    const indices = ticks.map((t) => t.tick!);
    expect(indices.every((k, i) => i === 0 || k > indices[i - 1]!)).toBe(true);
    expect(indices.at(-1)! + 1).toBe(ticks.length + r!.skippedTicks);
    for (const t of ticks) {
      expect(t.error).toBeNull();
      expect(t.lagMs!).toBeGreaterThanOrEqual(-2); // the timer may wake a hair early by the anchored clock
      expect(Math.abs(t.elapsedS - t.tick! * 0.1 - t.lagMs! / 1000)).toBeLessThan(1e-6);
    }
    expect(r!.records.find((x) => x.kind === 'pre')!.elapsedS).toBeLessThan(0);
    expect(readFileSync(join(dir, 'vllm.pre.prom'), 'utf8')).toBe(GOOD);
    expect(existsSync(join(dir, 'vllm.post.prom'))).toBe(true);
    const csv = readFileSync(join(dir, 'server-metrics.csv'), 'utf8').trim().split('\n');
    expect(csv[0]).toBe('elapsed_s,unix_ns,source,metric,labels_json,value');
    expect(csv).toHaveLength(1 + ticks.length); // other_metric is not kept
    expect(csv[1]).toMatch(/^\d+\.\d{3},\d{19},vllm,vllm:num_requests_running,"\{""model_name"":""m""\}",3$/);
  });

  it('skips ticks the loop overtook instead of bursting to catch up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scrape-'));
    const clock = anchoredClock();
    const s = new Scraper([{ name: 'vllm', url: `${base}/good`, interval_s: 0.1 }], dir, clock, { keepRecords: true });
    s.start(clock.nowNs());
    await sleep(120);
    const blockUntil = Date.now() + 450; // the coordinator's loop is busy for 4.5 intervals
    while (Date.now() < blockUntil) {}
    await sleep(250);
    await s.close();
    const [r] = s.results();
    const ticks = r!.records.filter((x) => x.kind === 'tick').map((x) => x.tick!);
    expect(r!.skippedTicks).toBeGreaterThanOrEqual(3);
    expect(ticks.filter((k) => k <= 1).length).toBeGreaterThanOrEqual(1); // scraped before the block
    expect(ticks.filter((k) => k >= 6).length).toBeGreaterThanOrEqual(1); // and after it
    // No catch-up: the only tick scraped after the block is the latest one due, so every scrape
    // started less than one interval after its due time (a burst would replay overdue ticks).
    for (const x of r!.records) expect(x.lagMs!, `tick ${x.tick}`).toBeLessThan(100 + 10);
    expect(new Set(ticks).size).toBe(ticks.length);
  });

  it('records unreachable, timeout, HTTP status and garbled per sample, never throwing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scrape-'));
    const clock = anchoredClock();
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const s = new Scraper(
      [
        { name: 'dead', url: `http://127.0.0.1:${deadPort}/metrics`, interval_s: 0.25 },
        { name: 'hang', url: `${base}/hang`, interval_s: 0.25 },
        { name: 'garbled', url: `${base}/garbled`, interval_s: 0.25 },
        { name: 'e500', url: `${base}/500`, interval_s: 0.25 },
      ],
      dir,
      clock,
      { keepRecords: true },
    );
    s.start(clock.nowNs());
    await sleep(900);
    await s.close();
    const kinds = Object.fromEntries(s.results().map((r) => [r.name, r.records.map((x) => x.error?.kind)]));
    for (const [name, kind] of Object.entries({ dead: 'unreachable', hang: 'timeout', garbled: 'garbled', e500: 'http_status' })) {
      expect(kinds[name]!.length, name).toBeGreaterThanOrEqual(2);
      expect(new Set(kinds[name]), name).toEqual(new Set([kind]));
    }
    const hang = s.results().find((r) => r.name === 'hang')!;
    expect(hang.records[0]!.durationMs).toBeGreaterThanOrEqual(tickTimeoutMs(0.25) - 5);
    expect(hang.records[0]!.error!.message).toMatch(/200 ms/);
    expect(s.results().find((r) => r.name === 'garbled')!.records[0]!.error!.message).toMatch(/line 1: expected a metric name/);
  });
});
