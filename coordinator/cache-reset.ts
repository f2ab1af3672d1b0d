// A clean cache between runs (target.reset_cache_between_runs): before a run's load, the
// coordinator asks the server to forget its prefix cache — vLLM's POST /reset_prefix_cache (a
// development endpoint: vLLM serves it with VLLM_SERVER_DEV_MODE=1), else SGLang's POST
// /flush_cache — so one run's (or stage's, or repeat's) cached prefixes never flatter the next.
// A server with neither fails the run before any load: a comparison that assumed a clean cache
// must not silently run on a warm one. What happened is stated in every run.json.
import { ErrorCode, LoadfleetError } from '../shared/errors.js';
import type { Target } from '../shared/plan.js';

/** run.json's `cache_reset`. */
export interface CacheReset {
  requested: boolean;
  /** The endpoint that answered (root-relative), or null when none was asked. */
  endpoint: string | null;
  http_status: number | null;
  /** When the reset was answered, Unix ms (before the run's start instant). */
  at_unix_ms: number | null;
  note: string;
}

/** One sentence per field, for run.json's field_definitions. */
export const CACHE_RESET_DEFINITIONS: Record<string, string> = {
  cache_reset:
    "whether the server's prefix cache was emptied before this run's load (target.reset_cache_between_runs): requested, the endpoint that answered (/reset_prefix_cache for vLLM, /flush_cache for SGLang), its HTTP status, when (Unix ms, before the start instant) and a note; the built-in engine-sim starts empty for every run",
};

const ENDPOINTS = [
  ['/reset_prefix_cache', 'vLLM'],
  ['/flush_cache', 'SGLang'],
] as const;

/** Empties the target's cache when the plan asks; throws LF_CACHE_RESET_UNAVAILABLE when it cannot. */
export async function resetServerCache(target: Target | undefined, log: (line: string) => void): Promise<CacheReset> {
  const none = { requested: false, endpoint: null, http_status: null, at_unix_ms: null };
  if (!target) return { ...none, note: 'the built-in engine-sim is started for this run alone, with an empty cache' };
  if (!target.reset_cache_between_runs)
    return { ...none, note: "target.reset_cache_between_runs is not set: the server's cache carries over from whatever it served before" };
  const root = serverRoot(target.base_url);
  const tried: string[] = [];
  for (const [path, server] of ENDPOINTS) {
    try {
      const res = await fetch(root + path, { method: 'POST', headers: headersOf(target), signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      if (res.ok) {
        log(`prefix cache reset: POST ${root}${path} answered ${res.status}`);
        return { requested: true, endpoint: path, http_status: res.status, at_unix_ms: Date.now(), note: `${server} reset endpoint` };
      }
      tried.push(`${path} (${server}): HTTP ${res.status}`);
    } catch (err) {
      tried.push(`${path} (${server}): ${(err as Error).message}`);
    }
  }
  throw new LoadfleetError(
    ErrorCode.CACHE_RESET_UNAVAILABLE,
    `target.reset_cache_between_runs is set but ${root} could not reset its cache (${tried.join('; ')}); vLLM serves /reset_prefix_cache only with VLLM_SERVER_DEV_MODE=1, or unset the option to run on a warm cache`,
  );
}

// The server root: the base URL without its /v1.
function serverRoot(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `${url.origin}${url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}`;
}

function headersOf(target: Target): Record<string, string> {
  const key = target.api_key_env ? process.env[target.api_key_env] : undefined;
  return { ...(target.headers ?? {}), ...(key ? { authorization: `Bearer ${key}` } : {}) };
}
