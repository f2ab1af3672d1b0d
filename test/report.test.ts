// report.html in a real browser: the real coordinator runs a short interference plan against the
// embedded engine-sim (its run.ts writes report.html), `coordinator report` writes an experiment
// report from the seed analysis, and headless Chromium (Debian's, driven by playwright-core) loads
// both from file:// and must see no error, no request beyond the file itself, and charts with data.
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYSIS_SCHEMA } from '../shared/result-schemas.js';
import { onlyRunDir, readRunJson, runCoordinator, startNode, tempDir, writePlan } from './harness.js';
import { skipFor } from './require.js';

const CHROMIUM = process.env.LOADFLEET_CHROMIUM ?? '/usr/bin/chromium';
const SKIP_BROWSER = skipFor(
  'the report browser tests',
  existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set LOADFLEET_CHROMIUM)`,
);
/** Set to a directory to keep full-page screenshots of both reports there. */
const SHOTS = process.env.LOADFLEET_REPORT_SCREENSHOTS;

// The default plan's shape in 12 s with smaller prompts, so requests finish within the run and
// every per-second chart gets several points per class.
function shortInterferencePlan(): unknown {
  const plan = JSON.parse(readFileSync(new URL('../examples/batch-interference-short.plan.json', import.meta.url), 'utf8'));
  plan.name = 'report-e2e';
  plan.duration_s = 12;
  plan.drain_timeout_s = 30;
  const [realtime, batch] = plan.classes;
  realtime.prompt.input_tokens = 1024;
  realtime.prompt.output_tokens = 32;
  realtime.load.phases[0] = {
    ...realtime.load.phases[0],
    start_s: 3,
    duration_s: 7,
    rate: { ...realtime.load.phases[0].rate, period_s: 3 },
  };
  batch.prompt.input_tokens = 4096;
  batch.prompt.output_tokens = 32;
  batch.load.phases[0] = { ...batch.load.phases[0], start_s: 0, duration_s: 9, rate: { ...batch.load.phases[0].rate, period_s: 3 } };
  plan.windows = [
    { name: 'baseline', start_s: 0, end_s: 3 },
    { name: 'surge', start_s: 4, end_s: 9 },
    { name: 'recovery', start_s: 10, end_s: 12 },
  ];
  return plan;
}

interface Loaded {
  consoleErrors: string[];
  pageErrors: string[];
  requests: string[];
}

async function open(browser: Browser, file: string): Promise<{ page: Page; seen: Loaded }> {
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  const seen: Loaded = { consoleErrors: [], pageErrors: [], requests: [] };
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') seen.consoleErrors.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => seen.pageErrors.push(e.message));
  page.on('request', (r) => seen.requests.push(r.url()));
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  return { page, seen };
}

/** Per chart: its series' point counts, keyed by series label. */
function seriesPoints(page: Page, chart: string): Promise<Record<string, number>> {
  return page.$$eval(`figure[data-chart="${chart}"] g.series`, (gs) =>
    Object.fromEntries(
      gs.map((g) => [
        g.getAttribute('data-series')!,
        (g.querySelector('polyline')!.getAttribute('points') ?? '').trim().split(/\s+/).length,
      ]),
    ),
  );
}

describe.skipIf(SKIP_BROWSER)('report.html in headless Chromium', () => {
  let browser: Browser;
  let runDir: string;
  let expDir: string;

  beforeAll(async () => {
    const work = tempDir('lf-report-');
    const r = await runCoordinator([
      '--agents',
      '2',
      '--quiet',
      '--plan',
      writePlan(work, shortInterferencePlan()),
      '--out',
      join(work, 'runs'),
    ]);
    expect(r.code, r.stderr).toBe(0);
    runDir = onlyRunDir(join(work, 'runs'));
    // An experiment directory: the seed's analysis, with the real run as its first run.
    expDir = join(work, 'experiment');
    mkdirSync(join(expDir, 'runs'), { recursive: true });
    cpSync(runDir, join(expDir, 'runs', 'r1'), { recursive: true });
    const analysis = JSON.parse(readFileSync(new URL('./fixtures/interference-analysis.json', import.meta.url), 'utf8'));
    analysis.runs[0].run_dir = 'runs/r1';
    // The seed's file in the published shape loadfleet writes it in (its schema and definitions on top).
    analysis.schema = ANALYSIS_SCHEMA;
    analysis.definitions = { experiment: 'the experiment this analysis is of' };
    writeFileSync(join(expDir, 'analysis.json'), JSON.stringify(analysis, null, 2));
    const rep = await startNode('coordinator/main.js', ['report', expDir]).done;
    expect(rep.code, rep.stderr).toBe(0);
    expect(rep.stdout.trim().split('\n')).toEqual([join(expDir, 'runs', 'r1', 'report.html'), join(expDir, 'report.html')]);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('the run report: no errors, nothing fetched, every chart drawn from the run files', async () => {
    const file = join(runDir, 'report.html');
    expect(existsSync(file), 'run.ts writes report.html after run.json').toBe(true);
    const { page, seen } = await open(browser, file);
    expect(seen.consoleErrors).toEqual([]);
    expect(seen.pageErrors).toEqual([]);
    expect(seen.requests).toEqual([pathToFileURL(file).href]);
    const run = readRunJson(runDir);
    expect(await page.textContent('h1')).toContain(run.run_id);

    // The answer first: the SLO verdict is the first section, in the words the CLI prints.
    expect(await page.$$eval('h2', (hs) => hs[0]?.textContent)).toBe('SLO verdict');
    const verdict = run.classes.realtime.slo_verdict.verdict as string;
    expect(await page.textContent('.slo-line')).toMatch(
      verdict === 'met' ? /realtime: SLO met in every window — p95 TTFT/ : /realtime: SLO (MISSED|not evaluable)/,
    );
    // Every time axis reaches the end of the drain (the last request's end), and the drain is shaded.
    const endS = Number(run.wall_clock_ms) / 1000;
    const axisEnds = await page.$$eval('figure[data-chart] g.plot', (gs) => gs.map((g) => Number(g.getAttribute('data-x-to'))));
    expect(axisEnds.length).toBeGreaterThanOrEqual(4);
    for (const to of axisEnds) expect(to).toBeGreaterThanOrEqual(endS);
    if (endS > run.plan.duration_s) expect(await page.$$eval('figure[data-chart="ttft-over-time"] g.band.drain', (b) => b.length)).toBe(1);
    const byIntended = await seriesPoints(page, 'ttft-by-intended');
    expect(byIntended['realtime p95']).toBeGreaterThanOrEqual(3);

    // TTFT: both classes, p50 and p95, finishing over several seconds.
    const ttft = await seriesPoints(page, 'ttft-over-time');
    for (const cls of ['realtime', 'batch']) {
      expect(ttft[`${cls} p95`], `${cls} p95 TTFT points`).toBeGreaterThanOrEqual(3);
      expect(ttft[`${cls} p50`]).toBe(ttft[`${cls} p95`]);
    }
    // Traffic: one point per traffic.csv row of the class, for offered, sent and finished.
    const rows = readFileSync(join(runDir, 'traffic.csv'), 'utf8').trim().split('\n').slice(1);
    const traffic = await seriesPoints(page, 'traffic');
    for (const cls of ['realtime', 'batch']) {
      const n = rows.filter((l) => l.split(',')[1] === cls).length;
      expect(n, `${cls} rows in traffic.csv (the classes send for 9–10 s)`).toBeGreaterThanOrEqual(9);
      expect([traffic[`${cls} offered`], traffic[`${cls} sent`], traffic[`${cls} finished`]]).toEqual([n, n, n]);
    }
    // Schedule lag: one line per agent, each with points in several seconds.
    const lag = await seriesPoints(page, 'schedule-lag');
    expect(Object.keys(lag).sort()).toEqual(run.agents.map((a: { agent_id: string }) => a.agent_id).sort());
    for (const n of Object.values(lag)) expect(n).toBeGreaterThanOrEqual(5);
    // Server: drawn from server-metrics.csv when the run scraped, otherwise said plainly.
    if (existsSync(join(runDir, 'server-metrics.csv'))) {
      const queues = await seriesPoints(page, 'server-queues');
      expect(queues['vLLM running']).toBeGreaterThanOrEqual(5);
      expect((await seriesPoints(page, 'server-pool-saturation'))['gateway pool saturation']).toBeGreaterThanOrEqual(5);
    } else {
      expect(await page.textContent('figure[data-chart="server"]')).toContain('no server metrics scraped');
    }
    // Every drawn chart is visible at a readable size and shades the plan windows.
    const widths = await page.$$eval('figure.chart svg', (svgs) => svgs.map((s) => s.getBoundingClientRect().width));
    expect(widths.length).toBeGreaterThanOrEqual(3);
    for (const w of widths) expect(w).toBeGreaterThan(800);
    expect(await page.$$eval('figure[data-chart="ttft-over-time"] g.band:not(.drain)', (b) => b.map((x) => x.textContent))).toEqual([
      'baseline',
      'surge',
      'recovery',
    ]);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'report-run.png'), fullPage: true });
  });

  it('the experiment report: no errors, nothing fetched, each arm with its repeats, runs linked', async () => {
    const file = join(expDir, 'report.html');
    const { page, seen } = await open(browser, file);
    expect(seen.consoleErrors).toEqual([]);
    expect(seen.pageErrors).toEqual([]);
    expect(seen.requests).toEqual([pathToFileURL(file).href]);
    expect(await page.textContent('.answer')).toContain('from 133 ms to 15,378 ms');
    for (const chart of ['arm-compare', 'arm-compare-detail']) {
      const arms = await page.$$eval(`figure[data-chart="${chart}"] g.arm`, (gs) =>
        gs.map((g) => [g.getAttribute('data-arm'), g.querySelectorAll('circle.repeat').length, g.querySelectorAll('.median').length]),
      );
      expect(arms).toEqual([
        ['realtime only', 3, 1],
        ['realtime with batch already running', 3, 1],
      ]);
    }
    // Every other {median, min, max} figure of the seed gets its own chart with all six repeats.
    const grid = await page.$$eval('.grid2 figure.chart', (fs) => fs.map((f) => f.querySelectorAll('circle.repeat').length));
    expect(grid).toEqual(new Array(13).fill(6));
    const href = await page.getAttribute('a[href$="report.html"]', 'href');
    expect(href).toBe('runs/r1/report.html');
    expect(existsSync(join(expDir, href!))).toBe(true);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'report-experiment.png'), fullPage: true });
  });
});
