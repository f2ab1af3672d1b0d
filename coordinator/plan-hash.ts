// The identity of a plan as a command gave it: the SHA-256 of its canonical JSON (keys sorted), so
// the same command restarted finds the run it started, and a plan that differs in anything — a
// rate, a prompt length, a target — is another plan.
import { createHash } from 'node:crypto';
import type { Plan } from '../shared/plan.js';

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (typeof v === 'bigint') return `${v}n`;
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/** The plan's hash (hex). */
export function planSha256(plan: Plan): string {
  return createHash('sha256')
    .update(JSON.stringify(canonical(plan)))
    .digest('hex');
}
