// W3C trace context for every request: the trace id is derived from the run and the request, so a
// server span that propagated it joins its request by the id alone — no table, no echo of a request
// id by the server. Layout of the 16-byte trace id (32 hex): 6 bytes of SHA-256(run id), 2 bytes of
// the class's position in the plan, 8 bytes of the request index. The client span id (the server
// span's parent) is 2 bytes of the class position and 6 of the request index + 1, never all zero.
// Limits: 65,536 classes, 2^48 − 1 requests per class.
import { createHash } from 'node:crypto';

/** The first 6 bytes of SHA-256(run id), as 12 hex: tells this run's traces from any other's. */
export function runTraceTag(runId: string): string {
  return createHash('sha256').update(runId).digest('hex').slice(0, 12);
}

const hex = (n: number, digits: number): string => n.toString(16).padStart(digits, '0');

/** The trace id of a request (32 hex). */
export function traceIdOf(runTag: string, classIndex: number, requestIndex: number): string {
  return `${runTag}${hex(classIndex, 4)}${hex(requestIndex, 16)}`;
}

/** The `traceparent` header of a request: version 00, sampled. */
export function traceparentOf(runTag: string, classIndex: number, requestIndex: number): string {
  return `00-${traceIdOf(runTag, classIndex, requestIndex)}-${hex(classIndex, 4)}${hex(requestIndex + 1, 12)}-01`;
}

/** The class position and request index a trace id names, or null when it is not of this run. */
export function requestOfTraceId(runTag: string, traceId: string): { classIndex: number; requestIndex: number } | null {
  if (traceId.length !== 32 || !traceId.startsWith(runTag)) return null;
  const classIndex = Number.parseInt(traceId.slice(12, 16), 16);
  const requestIndex = Number.parseInt(traceId.slice(16), 16);
  return Number.isSafeInteger(requestIndex) && Number.isInteger(classIndex) ? { classIndex, requestIndex } : null;
}
