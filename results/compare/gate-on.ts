// Pure: --gate-on's list (figure, class/figure or class/window/figure, comma-separated) as the
// class/window/figure keys that gate, or the problems with it.
import { FIGURE_NAMES } from './figure-keys.js';

/** classes: class → its windows (all included). */
export function parseGateOn(spec: string, classes: Record<string, readonly string[]>): { keys: string[]; problems: string[] } {
  const keys = new Set<string>();
  const problems: string[] = [];
  for (const item of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const parts = item.split('/');
    const figure = parts.at(-1)!;
    const cls = parts.length >= 2 ? parts[0]! : undefined;
    const win = parts.length === 3 ? parts[1]! : 'all';
    if (parts.length > 3 || !FIGURE_NAMES.includes(figure)) {
      problems.push(
        `--gate-on ${item}: expected figure, class/figure or class/window/figure with a figure among ${FIGURE_NAMES.join(', ')}`,
      );
      continue;
    }
    if (cls !== undefined && !classes[cls]) {
      problems.push(`--gate-on ${item}: no class ${cls} (classes: ${Object.keys(classes).join(', ')})`);
      continue;
    }
    for (const c of cls === undefined ? Object.keys(classes) : [cls]) {
      if (!classes[c]!.includes(win))
        problems.push(`--gate-on ${item}: class ${c} has no window ${win} (windows: ${classes[c]!.join(', ')})`);
      else keys.add(`${c}/${win}/${figure}`);
    }
  }
  if (keys.size === 0 && problems.length === 0) problems.push('--gate-on: names no figure');
  return { keys: [...keys], problems };
}
