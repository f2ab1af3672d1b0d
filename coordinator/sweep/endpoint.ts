// Before each stage against a user's endpoint: is it still there? Any HTTP answer counts (a 401 is a
// live server); a refused connection or no answer within the timeout means it died, and the sweep
// ends with the stages so far rather than hammering a dead endpoint with stage after stage.

/** Null when `GET {baseUrl}/models` got any HTTP answer, otherwise why not. */
export async function endpointProblem(baseUrl: string, timeoutMs = 5000): Promise<string | null> {
  const url = `${baseUrl.replace(/\/+$/, '')}/models`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return null;
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return `the endpoint did not answer GET ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`;
  }
}
