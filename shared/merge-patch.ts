// JSON Merge Patch (RFC 7386): how an experiment arm's `overrides` change the plan. Objects merge
// key by key, anything else (arrays included) replaces, and null deletes the key. A standard
// rule users can look up beats a home-made one.
import { isObj } from './validate-kit.js';

const DATA = { enumerable: true, writable: true, configurable: true } as const;

/** The target with `patch` applied; neither input is mutated. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObj(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    // Own properties only, read and written: `__proto__` is a key like any other in JSON, where an
    // assignment would set the prototype instead and the override would vanish from the plan.
    else Object.defineProperty(out, key, { value: mergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value), ...DATA });
  }
  return out;
}
