// Heap the coordinator's scraper keeps per scrape: scrapes the real engine-sim (gateway
// mode: engine and gateway metrics apart, as an embedded run does) every --interval seconds for
// --seconds, then forces GC and prints heap growth per scrape as JSON with definitions. Run with
// `node --expose-gc dist/scripts/scrape-memory.js [--seconds 30] [--interval 0.02] [--keep-records]`;
// it drives only the Scraper's public calls, so the same file measures an older build too.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Scraper } from '../coordinator/scrape/scraper.js';
import { anchoredClock } from '../shared/clock.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};
const seconds = arg('--seconds', 30);
const intervalS = arg('--interval', 0.02);
const keepRecords = process.argv.includes('--keep-records');
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const heap = (): number => {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
};

const simMain = join(dirname(fileURLToPath(import.meta.url)), '..', 'sim', 'main.js');
const sim = spawn(process.execPath, [simMain, '--port', '0', '--gateway'], { stdio: ['ignore', 'pipe', 'inherit'] });
const urls = await new Promise<{ vllm_metrics_url: string; epp_metrics_url: string }>((resolve) => {
  let buf = '';
  sim.stdout.on('data', (c: Buffer) => {
    buf += c.toString();
    if (buf.includes('\n')) resolve(JSON.parse(buf.slice(0, buf.indexOf('\n'))));
  });
});
const dir = mkdtempSync(join(tmpdir(), 'scrape-memory-'));
const clock = anchoredClock();
const targets = [
  { name: 'vllm', url: urls.vllm_metrics_url, interval_s: intervalS },
  { name: 'epp', url: urls.epp_metrics_url, interval_s: intervalS },
];
// The options argument is ignored by builds that predate it (they always keep every record).
const s = new (Scraper as unknown as new (...a: unknown[]) => Scraper)(targets, dir, clock, { keepRecords });
const withSummary = s as unknown as { summary?: () => { block(): { sources: { scrapes: number }[] } } };
const count = (): number =>
  withSummary.summary
    ? withSummary
        .summary()
        .block()
        .sources.reduce((n, x) => n + x.scrapes, 0)
    : s.results().reduce((n, r) => n + r.records.filter((x) => x.kind === 'tick').length, 0);
await s.snapshot('pre');
const before = heap();
s.start(clock.nowNs());
// The first half warms up (JIT code, connection pool, stream buffers); the slope is read after it.
await new Promise((r) => setTimeout(r, (seconds * 1000) / 2));
const midScrapes = count();
const mid = heap();
await new Promise((r) => setTimeout(r, (seconds * 1000) / 2));
await s.stop();
const scrapes = count();
const after = heap();
await s.close();
sim.kill('SIGTERM');
rmSync(dir, { recursive: true, force: true });
const perScrape = (after - mid) / (scrapes - midScrapes);
console.log(
  JSON.stringify(
    {
      figures: {
        build: withSummary.summary ? (keepRecords ? 'bounded, keepRecords' : 'bounded') : 'before (every record kept)',
        seconds,
        interval_s: intervalS,
        scrapes,
        heap_growth_bytes: after - before,
        second_half_growth_bytes: after - mid,
        bytes_per_scrape: Math.round(perScrape),
        bytes_per_run_second_at_2_sources_every_0_5_s: Math.round(perScrape * 4),
      },
      definitions: {
        scrapes: 'interval scrapes made of the two sources (vllm and epp metrics of one engine-sim in gateway mode)',
        heap_growth_bytes: 'heapUsed after the loop stopped minus before it started, each after three forced GCs',
        second_half_growth_bytes: 'heapUsed at the end minus at half time (both after forced GCs): growth once warm',
        bytes_per_scrape: 'second_half_growth_bytes / scrapes made in the second half: what the scraper keeps per scrape',
        bytes_per_run_second_at_2_sources_every_0_5_s: 'bytes_per_scrape × 4: an embedded run scrapes 2 sources every 0.5 s',
      },
    },
    null,
    2,
  ),
);
