// JSON Merge Patch (RFC 7386): how an experiment arm's `overrides` change the plan. Objects merge
// key by key, anything else (arrays included) replaces, and null deletes the key. A standard
// rule users can look up beats a home-made one.
import { isObj } from './validate-kit.js';

/** The target with `patch` applied; neither input is mutated. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObj(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}
