// suite: contract
// The architecture's import rules (style.md): the top folders stand in floors — coordinator/ (what
// runs while agents are connected) over results/ (what reads a finished run directory) over
// figures/ (the pure figures both compute) over shared/; agent/ stands on shared/ alone, sim/ on
// nothing of ours. Every import points down that stack, and inside each folder no arrow runs back up.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** What each product folder may import besides itself: the floors below it, nothing beside or above. */
const MAY_IMPORT: Record<string, string[]> = {
  shared: [],
  figures: ['shared'],
  results: ['figures', 'shared'],
  coordinator: ['results', 'figures', 'shared'],
  agent: ['shared'],
  sim: [],
};
const PRODUCT = Object.keys(MAY_IMPORT);

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return tsFiles(p);
    return p.endsWith('.ts') && !p.endsWith('.test.ts') ? [p] : [];
  });
}

/** The top folder a relative specifier of `file` lands in. */
function topOf(file: string, spec: string): string {
  return relative(ROOT, resolve(file, '..', spec)).split('/')[0]!;
}

/** Imports of `folder` that land in another top folder it may not import. */
function offences(folder: string): string[] {
  const out: string[] = [];
  for (const file of tsFiles(join(ROOT, folder))) {
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import) '(\.{1,2}\/[^']+)'/g)) {
      const top = topOf(file, m[1]!);
      if (top !== folder && !MAY_IMPORT[folder]!.includes(top)) out.push(`${relative(ROOT, file)} → ${m[1]}`);
    }
  }
  return out;
}

describe('import directions', () => {
  it('the floors of the top folders stack: no folder reaches back up to one that imports it', () => {
    expect(cycles(new Map(Object.entries(MAY_IMPORT)))).toEqual([]);
    expect(cycles(new Map([...Object.entries(MAY_IMPORT), ['shared', ['results']]]))).toEqual([['figures', 'results', 'shared']]);
  });

  for (const folder of PRODUCT) {
    const may = MAY_IMPORT[folder]!;
    it(`${folder}/ imports ${may.length > 0 ? `only from ${may.map((f) => `${f}/`).join(', ')}` : 'nothing of ours'}`, () => {
      expect(offences(folder)).toEqual([]);
    });
  }
});

// Every relative import, type-only ones included: a cycle of types is still two modules that
// cannot be read (or moved) one without the other.
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const folder of [...PRODUCT, 'bench', 'scripts']) {
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

// Inside each product folder but sim/ (which stands alone), a room is one file
// directly in it or one subfolder taken whole (every file under <top>/<folder>/). An import between two rooms is an arrow from the importer's room to
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

describe('no arrow runs back up inside a top folder', () => {
  it('finds a loop of rooms when a subfolder and a file of its parent import each other (the check can fail)', () => {
    const g = new Map([
      ['coordinator/collector.ts', ['coordinator/artifacts/hlog.ts']],
      ['coordinator/artifacts/hlog.ts', []],
      ['coordinator/artifacts/run-json.ts', ['coordinator/collector.ts']],
      ['coordinator/run.ts', ['coordinator/artifacts/run-json.ts']],
    ]);
    expect(cycles(roomGraph(g, 'coordinator'))).toEqual([['coordinator/artifacts/', 'coordinator/collector.ts']]);
  });

  for (const top of ['shared', 'figures', 'results', 'coordinator', 'agent']) {
    it(`the rooms of ${top}/ stack in floors with every import pointing down`, () => {
      const rooms = roomGraph(importGraph(), top);
      expect(rooms.size).toBeGreaterThan(top === 'coordinator' ? 30 : 5);
      expect(cycles(rooms)).toEqual([]);
    });
  }
});

// docs/layout.md is the map of the house, so it must stay true: every top folder is a room of its
// block, every folder of the product is named in its room's text (`compare/baselines/` under
// results/), and every folder or .ts file it names exists — in the block relative to the room it
// sits in (or whole, when it starts with a top folder), in the prose as a whole path in backticks.
const PRODUCT_ROOMS = ['shared', 'figures', 'results', 'coordinator', 'agent', 'sim'];
const NOT_ROOMS = new Set(['node_modules', 'dist', 'runs', 'experiments', 'sweeps']);

interface Tree {
  tops: string[];
  /** Every folder under a top folder, as `top/a/b`. */
  foldersOf: (top: string) => string[];
  exists: (path: string) => boolean;
}

function layoutProblems(md: string, tree: Tree): string[] {
  const problems: string[] = [];
  const [before = '', block = '', after = ''] = md.split(/^```\s*$/m);
  const rooms = new Map<string, string>();
  let room = '';
  for (const line of block.split('\n')) {
    const opens = /^([a-z][\w-]*)\/\s/.exec(line);
    if (opens) room = opens[1]!;
    if (room) rooms.set(room, `${rooms.get(room) ?? ''}${opens ? line.slice(opens[0].length - 1) : line}\n`);
  }
  const whole = (from: string, token: string): string => (tree.tops.includes(token.split('/')[0]!) ? token : `${from}/${token}`);
  const named = new Set<string>();
  for (const [r, text] of rooms) {
    if (!tree.tops.includes(r)) problems.push(`a room the house does not have: ${r}/`);
    for (const m of text.matchAll(/(?<![\w./-])((?:[a-z][\w.-]*\/)+)(?!\w)|(?<![\w./-])((?:[a-z][\w-]*\/)*[\w-]+\.ts)\b/g)) {
      const path = whole(r, (m[1] ?? m[2]!).replace(/\/$/, ''));
      named.add(path);
      if (!tree.exists(path)) problems.push(`named under ${r}/ but not there: ${path}`);
    }
  }
  for (const m of `${before}${after}`.matchAll(/`([^`\s]+)`/g)) {
    const token = m[1]!;
    if (!token.includes('/') && !token.endsWith('.ts')) continue;
    if (!tree.exists(token.replace(/\/$/, ''))) problems.push(`named in the prose but not there: ${token}`);
  }
  for (const top of tree.tops) if (!rooms.has(top)) problems.push(`a top folder the page does not name: ${top}/`);
  for (const top of PRODUCT_ROOMS.filter((t) => tree.tops.includes(t))) {
    for (const folder of tree.foldersOf(top)) if (!named.has(folder)) problems.push(`a folder the page does not name: ${folder}/`);
  }
  return problems;
}

function subfolders(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [`${dir}/${e.name}`, ...subfolders(`${dir}/${e.name}`)]);
}

describe('docs/layout.md is true', () => {
  it('finds a folder it does not name, a folder that is not there and a top folder it leaves out (the check can fail)', () => {
    const md = ['# L', '```', 'shared/   x, ghost/ (gone)', 'agent/    load/', '```', 'See `agent/nope.ts`.'].join('\n');
    const tree: Tree = {
      tops: ['shared', 'agent', 'docs'],
      foldersOf: (top) => (top === 'shared' ? ['shared/apis'] : ['agent/load']),
      exists: (p) => ['shared', 'agent', 'docs', 'shared/apis', 'agent/load'].includes(p),
    };
    expect(layoutProblems(md, tree)).toEqual([
      'named under shared/ but not there: shared/ghost',
      'named in the prose but not there: agent/nope.ts',
      'a top folder the page does not name: docs/',
      'a folder the page does not name: shared/apis/',
    ]);
  });

  it('names every top folder and every folder of the product, and nothing that is not there', () => {
    const tops = readdirSync(ROOT, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.') && !NOT_ROOMS.has(e.name))
      .map((e) => e.name);
    const tree: Tree = { tops, foldersOf: subfolders, exists: (p) => existsSync(join(ROOT, p)) };
    expect(tops).toEqual(expect.arrayContaining(['coordinator', 'results', 'figures', 'shared']));
    expect(layoutProblems(readFileSync(join(ROOT, 'docs/layout.md'), 'utf8'), tree)).toEqual([]);
  });
});
