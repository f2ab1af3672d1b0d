// The architecture's import rules (style.md): shared/ imports nothing of ours, agent/ and
// coordinator/ meet only in shared/, sim/ stands alone.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FORBIDDEN: Record<string, string[]> = {
  shared: ['agent', 'coordinator', 'sim', 'test', 'bench'],
  agent: ['coordinator', 'sim', 'test', 'bench'],
  coordinator: ['agent', 'sim', 'test', 'bench'],
  sim: ['shared', 'agent', 'coordinator', 'test', 'bench'],
};

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return tsFiles(p);
    return p.endsWith('.ts') && !p.endsWith('.test.ts') ? [p] : [];
  });
}

describe('import directions', () => {
  for (const [folder, banned] of Object.entries(FORBIDDEN)) {
    it(`${folder}/ imports nothing from ${banned.join(', ')}`, () => {
      const offences: string[] = [];
      for (const file of tsFiles(join(ROOT, folder))) {
        for (const m of readFileSync(file, 'utf8').matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
          const top = relative(ROOT, resolve(file, '..', m[1]!)).split('/')[0]!;
          if (banned.includes(top)) offences.push(`${relative(ROOT, file)} → ${m[1]}`);
        }
      }
      expect(offences).toEqual([]);
    });
  }
});
