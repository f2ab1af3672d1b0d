// suite: contract
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

// Every relative import, type-only ones included: a cycle of types is still two modules that
// cannot be read (or moved) one without the other.
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const folder of [...Object.keys(FORBIDDEN), 'bench', 'scripts']) {
    for (const file of tsFiles(join(ROOT, folder))) {
      const deps = [...readFileSync(file, 'utf8').matchAll(/(?:from|import) '(\.{1,2}\/[^']+)'/g)].map((m) =>
        relative(ROOT, resolve(file, '..', m[1]!.replace(/\.js$/, '.ts'))),
      );
      graph.set(relative(ROOT, file), deps);
    }
  }
  return graph;
}

/** Strongly connected components with more than one module (or a module importing itself): Tarjan. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('import cycles', () => {
  it('finds a cycle when there is one (the check can fail)', () => {
    const g = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(cycles(g)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('no module imports itself through others (type-only imports count)', () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(100);
    expect(cycles(graph)).toEqual([]);
  });
});

// Inside coordinator/, a room is one file directly in it or one subfolder taken whole (every file
// under coordinator/<folder>/). An import between two rooms is an arrow from the importer's room to
// the imported one's. An arrow runs back up when it closes a loop of rooms: then no stacking of the
// rooms in floors has every arrow pointing down. The rule is that there is none, so each subfolder
// can be read, moved or replaced as one piece standing on what is below it.
function roomOf(path: string): string {
  const parts = path.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}/` : path;
}

/** The room graph of one top folder: rooms as nodes, one edge per importing pair of rooms. */
function roomGraph(graph: Map<string, string[]>, top: string): Map<string, string[]> {
  const rooms = new Map<string, Set<string>>();
  for (const [file, deps] of graph) {
    if (!file.startsWith(`${top}/`)) continue;
    const from = roomOf(file);
    const to = rooms.get(from) ?? new Set<string>();
    rooms.set(from, to);
    for (const d of deps) if (d.startsWith(`${top}/`) && roomOf(d) !== from) to.add(roomOf(d));
  }
  return new Map([...rooms].map(([r, to]) => [r, [...to]]));
}

describe('no arrow runs back up inside coordinator/', () => {
  it('finds a loop of rooms when a subfolder and a file of its parent import each other (the check can fail)', () => {
    const g = new Map([
      ['coordinator/collector.ts', ['coordinator/artifacts/hlog.ts']],
      ['coordinator/artifacts/hlog.ts', []],
      ['coordinator/artifacts/run-json.ts', ['coordinator/collector.ts']],
      ['coordinator/run.ts', ['coordinator/artifacts/run-json.ts']],
    ]);
    expect(cycles(roomGraph(g, 'coordinator'))).toEqual([['coordinator/artifacts/', 'coordinator/collector.ts']]);
  });

  it('the rooms of coordinator/ stack in floors with every import pointing down', () => {
    const rooms = roomGraph(importGraph(), 'coordinator');
    expect(rooms.size).toBeGreaterThan(30);
    expect(cycles(rooms)).toEqual([]);
  });
});
