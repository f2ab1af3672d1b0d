// Self-test figures per host, build and Node, cached on disk: local fleets start N agent
// processes on one machine at once, and N concurrent self-tests would measure each other, so one
// process measures (holding a lock file) and the others wait for its figures. A later agent of
// the same build on the same host reuses them for MAX_AGE_MS.
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { arch, cpus, hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SelfTestFigures } from '../../shared/self-test.js';
import { parseSelfTest } from '../../shared/self-test.js';
import { measureSelf } from './measure.js';

/** How the agent gets its figures: measure now, reuse this host's (measuring if none), or none. */
export type SelfTestMode = 'run' | 'cached' | 'skip';

/** Figures older than this are measured again. */
export const MAX_AGE_MS = 24 * 3600 * 1000;
/** A lock older than this is a crashed measurer's. */
const STALE_LOCK_MS = 60_000;

/** The cache directory: $LOADFLEET_SELF_TEST_DIR, or loadfleet-self-test in the temp directory. */
export function cacheDir(): string {
  return process.env.LOADFLEET_SELF_TEST_DIR ?? join(tmpdir(), 'loadfleet-self-test');
}

// The modules whose code the figures describe: a rebuild that changes them is another build.
const BUILD_FILES = ['../client.js', '../sse.js', '../recorder.js', '../loop-busy.js', './measure.js', './server.js'];

/** Host, CPU model, Node and build: what the figures hold for. */
export async function cacheKey(): Promise<string> {
  const h = createHash('sha256');
  h.update(`${hostname()}\n${cpus()[0]?.model ?? ''}\n${arch()}\n${process.version}\n`);
  for (const f of BUILD_FILES) h.update(await readFile(fileURLToPath(new URL(f, import.meta.url))).catch(() => Buffer.from(f)));
  return h.digest('hex').slice(0, 16);
}

/** The agent's figures by `mode` (null for skip); `log` says what it did. */
export async function selfTestFigures(mode: SelfTestMode, log: (line: string) => void): Promise<SelfTestFigures | null> {
  if (mode === 'skip') return null;
  const dir = cacheDir();
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${await cacheKey()}.json`);
  const lock = `${path}.lock`;
  for (let waitedMs = 0; ; waitedMs += 100) {
    if (mode === 'cached') {
      const cached = await readCached(path);
      if (cached) {
        log(`self-test: reusing this host's figures of ${cached.measured_at}`);
        return { ...cached, source: 'cached' };
      }
    }
    const held = await takeLock(lock);
    if (held) {
      try {
        const figures = await measureSelf();
        await writeFile(`${path}.tmp`, JSON.stringify(figures));
        await rename(`${path}.tmp`, path);
        log(describe(figures));
        return figures;
      } finally {
        await rm(lock, { force: true });
      }
    }
    // Another process of this host is measuring: its figures are ours (with `run`, we measure after it).
    if (waitedMs > STALE_LOCK_MS) await rm(lock, { force: true });
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One line for the agent's log. */
export function describe(f: SelfTestFigures): string {
  const at = Object.entries(f.elu_at_error_ms)
    .map(([level, elu]) => `${level} at ${elu === null ? `> ${Math.max(...f.error_curve.map((p) => p.elu)).toFixed(2)}` : elu.toFixed(2)}`)
    .join(', ');
  return (
    `self-test (${f.duration_ms} ms): ${f.cpu_us_per_start} µs CPU per start, ${f.cpu_us_per_chunk} per chunk, ` +
    `${f.cpu_us_per_finish} per finish; ${(f.memory_bytes_per_stream / 1024).toFixed(1)} KiB per open stream; ` +
    `stamp error p99 passes ${at} event-loop utilisation`
  );
}

async function readCached(path: string): Promise<SelfTestFigures | null> {
  try {
    const figures = parseSelfTest(JSON.parse(await readFile(path, 'utf8')));
    if (!figures || Date.now() - Date.parse(figures.measured_at) > MAX_AGE_MS) return null;
    return figures;
  } catch {
    return null;
  }
}

async function takeLock(lock: string): Promise<boolean> {
  try {
    const fh = await open(lock, 'wx');
    await fh.close();
    return true;
  } catch {
    const s = await stat(lock).catch(() => null);
    if (s && Date.now() - s.mtimeMs > STALE_LOCK_MS) await rm(lock, { force: true });
    return false;
  }
}
