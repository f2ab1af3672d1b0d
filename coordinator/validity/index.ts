// The validity gates of a run: data_quality and slo_proof (domain.md §5).
import { dataQuality } from './data-quality.js';
import type { RunFacts } from './input.js';
import { validityInput } from './input.js';
import { sloProof } from './slo-proof.js';
import type { Gate } from './types.js';

export type { RunFacts } from './input.js';

/** Both gates of one run. */
export function assessRun(facts: RunFacts): { data_quality: Gate; slo_proof: Gate } {
  const input = validityInput(facts);
  return { data_quality: dataQuality(input), slo_proof: sloProof(input) };
}

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
