// The agent's side of an API: where its requests go. Each API's bodies and response contract are
// its module in shared/apis/ (the registry finds them); these are re-exported for the agent's use.
import { pathFor } from '../../shared/apis/contract.js';
import { apiDescriptor } from '../../shared/apis/registry.js';
import type { ApiKind } from '../../shared/plan.js';

export type { ApiAdapter, BodyFields, BodyInput, DeltaPatterns, DeltaText, UsageCounts } from '../../shared/apis/contract.js';

/**
 * Where requests go for a plan's base URL: the origin, the API's path (with `model` in it, for an
 * API whose path names the model), and `{base}/models` for the warm-up.
 */
export function endpointPaths(
  baseUrl: string,
  adapter: { path: string },
  model = '',
): { origin: string; path: string; modelsPath: string } {
  const base = new URL(baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  return { origin: base.origin, path: basePath + pathFor(adapter.path, model), modelsPath: `${basePath}/models` };
}

/** The headers an API's requests carry the key in (`undefined`: no key), and any version the API requires. */
export function apiAuthHeaders(api: ApiKind, key: string | undefined): Record<string, string> {
  return apiDescriptor(api).authHeaders(key);
}
