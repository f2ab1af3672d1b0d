// Property: an experiment arm's overrides apply as JSON Merge Patch (RFC 7386) says, for any JSON
// target and patch, keys such as `__proto__` included: the result is the reference algorithm's,
// neither input changes, and applying the same patch twice changes nothing more.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergePatch } from './merge-patch.js';

const SOAK = process.env.LOADFLEET_SOAK === '1' ? 10 : 1;
/** The soak round's runs take ten times as long. */
const TIMEOUT_MS = SOAK > 1 ? 600_000 : undefined;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const isObj = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386 §2's pseudo-code, on own properties only (JSON has no prototypes). */
function reference(target: Json | undefined, patch: Json): Json {
  if (!isObj(patch)) return patch;
  const out: Record<string, Json> = isObj(target) ? JSON.parse(JSON.stringify(target)) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else
      Object.defineProperty(out, k, {
        value: reference(Object.hasOwn(out, k) ? out[k] : undefined, v),
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return out;
}

// Keys that collide with what every object inherits, and a few that collide with each other.
const key = fc.oneof(fc.constantFrom('a', 'b', '__proto__', 'constructor', 'toString', 'valueOf'), fc.string({ maxLength: 3 }));
const json: fc.Arbitrary<Json> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, 0, 1, 'x'),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  ),
})).value as fc.Arbitrary<Json>;

/** JSON text of a value, own properties in order: what the plan validator and the files see. */
const text = (v: unknown): string => JSON.stringify(v);

describe('JSON Merge Patch (property)', () => {
  it(
    'any target and patch: the RFC’s result, inputs unchanged, idempotent',
    () => {
      fc.assert(
        fc.property(json, json, (target, patch) => {
          const [t, p] = [text(target), text(patch)];
          const got = mergePatch(target, patch);
          expect(text(target)).toBe(t);
          expect(text(patch)).toBe(p);
          expect(text(got)).toBe(text(reference(target, patch)));
          expect(text(mergePatch(got, patch))).toBe(text(got));
          if (isObj(got)) expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
        }),
        { numRuns: 2000 * SOAK },
      );
    },
    TIMEOUT_MS,
  );
});
