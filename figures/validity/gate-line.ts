// A gate's verdict as the one line a run's summary and report print.
import type { Gate } from './types.js';

/**
 * One summary line per gate: valid, or the failing and unevaluated check names; then how many
 * checks applied and, for those that did not, why (so a pass says what it rests on).
 */
export function gateLine(label: string, g: Gate): string {
  const applied = g.applied ?? g.checks.filter((c) => c.status !== 'not_applicable').map((c) => c.name);
  const na = (g.not_applicable ?? []).map((c) => `${c.name}: ${c.reason}`);
  const scope = `${applied.length} of ${g.checks.length} checks applied${na.length > 0 ? `; not applicable — ${na.join('; ')}` : ''}`;
  if (g.valid) return `  ${label}: valid (${scope})`;
  const failed = g.checks.filter((c) => c.status === 'fail').map((c) => c.name);
  const open = g.checks.filter((c) => c.status === 'not_evaluated').map((c) => c.name);
  const parts = [failed.length > 0 ? `failed ${failed.join(', ')}` : '', open.length > 0 ? `not evaluated ${open.join(', ')}` : ''];
  return `  ${label}: NOT valid (${parts.filter(Boolean).join('; ')}; ${scope})`;
}
