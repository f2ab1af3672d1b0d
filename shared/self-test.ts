// An agent's self-test figures (agent/self-test/): what one agent process costs per request and
// how its timing error grows with its event-loop utilisation, measured on its own host, build and
// Node when it joins. Sent in `hello.self_test`, kept in run.json per agent, and read by the
// coordinator's headroom rule (coordinator/headroom/). Pure: the type, its check, and the curve.

/** One point of the timing-error curve: a load step of the self-test. */
export interface ErrorPoint {
  /** Event-loop utilisation of the agent's thread over the step, 0–1. */
  elu: number;
  /** p99 of the first-token stamp error over the step's requests, ms. */
  p99_ms: number;
  /** Requests the p99 is over. */
  n: number;
}

/** The stamp-error levels the self-test states the utilisation for (ms). */
export const ERROR_LEVELS_MS = [1, 5, 20] as const;

/** What an agent measured of itself. */
export interface SelfTestFigures {
  /** 1: this shape. */
  version: 1;
  /** When it was measured (ISO 8601), and whether this process measured it or reused this host's cached figures. */
  measured_at: string;
  source: 'measured' | 'cached';
  /** Wall time the self-test took, ms. */
  duration_ms: number;
  node: string;
  /** Logical CPUs of the host and how many were free (1 − load average / CPUs, rounded down, ≥ 0) when it ran. */
  cpus: number;
  free_cores: number;
  /** CPU µs the agent spends to start one request (build, dispatch, write, read its headers and first chunk) on a warm connection. */
  cpu_us_per_start: number;
  /** CPU µs per further streamed chunk (read, stamp, SSE scan). */
  cpu_us_per_chunk: number;
  /** CPU µs per finished request (its end, record and histograms). */
  cpu_us_per_finish: number;
  /** Memory (heap + external + array buffers, after a GC) per further open stream, bytes. */
  memory_bytes_per_stream: number;
  /** The open streams the memory figure is over. */
  memory_streams: number;
  /** The stamp error's p99 against the agent's event-loop utilisation, ascending utilisation. */
  error_curve: ErrorPoint[];
  /** Per level of ERROR_LEVELS_MS ("1ms", …): the utilisation at which the p99 passes it, or null if it did not within the measured range. */
  elu_at_error_ms: Record<string, number | null>;
  /** Share of the self-test's stamp errors within first_content_uncertainty_ns + 0.5 ms (its measured coverage). */
  uncertainty_coverage: number | null;
}

/** run.json definitions of the self-test figures (one sentence each). */
export const SELF_TEST_DEFINITIONS: Record<string, string> = {
  self_test:
    'Per agent: what the agent process measured of itself on its own host, build and Node when it joined (agent/self-test), against a loopback SSE server in a child process; null when the agent skipped it (--self-test skip).',
  'self_test.source':
    "'measured': this agent process ran the self-test; 'cached': it reused the figures another agent process of the same build and Node measured on this host (at measured_at).",
  'self_test.cpu_us_per_start':
    'Process CPU µs to start one streamed request on a warm keep-alive connection: build and dispatch it, write it, read its headers and first chunk.',
  'self_test.cpu_us_per_chunk':
    'Process CPU µs per further streamed chunk, each arriving in its own socket read: read, stamp, SSE scan and delta parse.',
  'self_test.cpu_us_per_finish': "Process CPU µs to end one request: the stream's end, its record and its histograms (agent/recorder.ts).",
  'self_test.memory_bytes_per_stream':
    'Heap + external + array-buffer bytes (after a forced GC) per open stream, measured as memory_streams more streams held open beside as many already open (so once-per-agent pools do not count).',
  'self_test.error_curve':
    "Per load step (closed-loop streams at 10 ms between chunks): the agent thread's event-loop utilisation and the p99 of its first-token stamp error (stamp − the server's write instant, same host monotonic clock).",
  'self_test.elu_at_error_ms':
    'For each stated error level (1, 5, 20 ms): the event-loop utilisation at which the stamp error p99 passes it, interpolated on error_curve; null when it did not within the measured range.',
  'self_test.uncertainty_coverage':
    "Share of the self-test's successful requests whose stamp error is within its first_content_uncertainty_ns + 0.5 ms: how often that estimate covered the error on this host.",
  'self_test.free_cores': 'Logical CPUs minus the 1-minute load average, rounded down, when the self-test ran.',
};

const NUMBER_FIELDS = [
  'duration_ms',
  'cpus',
  'free_cores',
  'cpu_us_per_start',
  'cpu_us_per_chunk',
  'cpu_us_per_finish',
  'memory_bytes_per_stream',
  'memory_streams',
] as const;

/** The figures if `v` is a well-formed SelfTestFigures, else null (an agent's hello is not trusted blindly). */
export function parseSelfTest(v: unknown): SelfTestFigures | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (o.version !== 1 || typeof o.measured_at !== 'string' || (o.source !== 'measured' && o.source !== 'cached')) return null;
  for (const f of NUMBER_FIELDS) if (typeof o[f] !== 'number' || !Number.isFinite(o[f]) || (o[f] as number) < 0) return null;
  if (!Array.isArray(o.error_curve) || o.error_curve.length === 0) return null;
  for (const p of o.error_curve as unknown[]) {
    const q = p as Record<string, unknown>;
    if (typeof q !== 'object' || q === null || typeof q.elu !== 'number' || typeof q.p99_ms !== 'number' || typeof q.n !== 'number')
      return null;
  }
  return v as SelfTestFigures;
}

/**
 * The stamp-error p99 the curve implies at utilisation `elu`: linear between measured points,
 * the first point's below them; beyond the last point it is at least the last point's (and
 * `beyond` says the projection leaves the measured range).
 */
export function errorAtElu(curve: readonly ErrorPoint[], elu: number): { p99_ms: number; beyond: boolean } {
  const pts = monotoneCurve(curve);
  if (elu <= pts[0]!.elu) return { p99_ms: pts[0]!.p99_ms, beyond: false };
  for (let i = 1; i < pts.length; i++) {
    const a = pts[i - 1]!;
    const b = pts[i]!;
    if (elu <= b.elu) return { p99_ms: lerp(a.p99_ms, b.p99_ms, (elu - a.elu) / (b.elu - a.elu || 1)), beyond: false };
  }
  return { p99_ms: pts.at(-1)!.p99_ms, beyond: true };
}

/** The utilisation at which the curve's p99 passes `levelMs`, or null if it never does. */
export function eluAtError(curve: readonly ErrorPoint[], levelMs: number): number | null {
  const pts = monotoneCurve(curve);
  if (pts[0]!.p99_ms > levelMs) return pts[0]!.elu;
  for (let i = 1; i < pts.length; i++) {
    const a = pts[i - 1]!;
    const b = pts[i]!;
    if (b.p99_ms > levelMs) return a.elu + ((levelMs - a.p99_ms) / (b.p99_ms - a.p99_ms)) * (b.elu - a.elu);
  }
  return null;
}

/**
 * The curve sorted by utilisation with its error made non-decreasing (a running maximum): a
 * step that measured less error at more load is noise, and a bound must not promise it.
 */
export function monotoneCurve(curve: readonly ErrorPoint[]): ErrorPoint[] {
  const sorted = [...curve].sort((a, b) => a.elu - b.elu);
  let worst = 0;
  return sorted.map((p) => {
    worst = Math.max(worst, p.p99_ms);
    return { ...p, p99_ms: worst };
  });
}

function lerp(a: number, b: number, t: number): number {
  return a + (b - a) * t;
}
