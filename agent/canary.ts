// The request canary (domain.md §1): a response passes when its visible output begins with its
// own marker and no other request's marker appears anywhere in what it streamed (reasoning too).
// A capture that is not complete fails closed: what was not seen cannot be vouched for.
import type { CanaryResult } from '../shared/metrics.js';
import { CANARY_PATTERN } from '../shared/prompt-text.js';
import type { CapturedText } from './text-capture.js';

/** Checks one response's text against its marker. */
export function checkCanary(marker: string, text: CapturedText): CanaryResult {
  const seen = [...`${text.reasoning}\n${text.visible}`.matchAll(CANARY_PATTERN)].map((m) => m[0]);
  const foreign = seen.filter((m) => m !== marker).length;
  const atStart = text.visible.trimStart().startsWith(marker);
  return {
    marker,
    passed: text.complete && atStart && foreign === 0,
    marker_at_start: atStart,
    observed_marker_count: seen.length - foreign,
    foreign_marker_count: foreign,
    capture_complete: text.complete,
  };
}

/** Why a canary failed, in one sentence. */
export function canaryFailure(c: CanaryResult): string {
  if (!c.capture_complete) return `canary ${c.marker}: the capture of the response was incomplete (fails closed)`;
  if (c.foreign_marker_count > 0) return `canary ${c.marker}: ${c.foreign_marker_count} other request marker(s) in the response`;
  return `canary ${c.marker}: the visible output does not begin with the marker`;
}
