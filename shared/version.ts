// The package's version, read once from its package.json (shipped in every install), so every
// part's --version says the same thing as `npm ls`.
import { readFileSync } from 'node:fs';

function readVersion(): string {
  // dist/shared/version.js and shared/version.ts (under vitest) sit at different depths.
  for (const rel of ['../../package.json', '../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'loadfleet' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not at this depth
    }
  }
  return 'unknown';
}

/** loadfleet's version, e.g. `0.1.0`. */
export const VERSION = readVersion();
