// node-llama-cpp, the real llama.cpp inference of test/llama.test.ts and test/doctor-llama.test.ts,
// is about 720 MB of prebuilt llama.cpp builds: it lives in its own test-only package, test/llama/
// (pinned, with its own lock), installed by `npm run test:deps` and .ci/run — not by a user's
// `npm ci`. So it is loaded from there by path, and typed here by the little the tests use.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** One token id. */
export type Token = number & { readonly __token?: never };

/** The part of node-llama-cpp's API the test server uses. */
export interface NodeLlamaCpp {
  LlamaLogLevel: { error: unknown };
  getLlama(options: { gpu: false; build: 'never'; logLevel: unknown }): Promise<{
    loadModel(options: { modelPath: string }): Promise<LlamaModel>;
  }>;
}

export interface LlamaModel {
  tokens: { bos: Token | null };
  fileInfo: { metadata: unknown };
  tokenize(text: string, specialTokens: boolean): Token[];
  detokenize(tokens: readonly Token[], specialTokens: boolean, lastTokens?: readonly Token[]): string;
  createContext(options: { contextSize: number; sequences: number; threads: number }): Promise<{
    getSequence(): {
      evaluate(input: Token[], options: { temperature: number; yieldEogToken: boolean }): AsyncIterable<Token>;
      dispose(): void;
    };
  }>;
  createEmbeddingContext(options: { contextSize: number; threads: number }): Promise<{
    getEmbeddingFor(input: Token[]): Promise<{ vector: readonly number[] }>;
  }>;
}

// The clone's root: the nearest folder up with loadfleet's package.json (from test/ or dist/test/).
function cloneRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (dir !== dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'loadfleet') return dir;
    dir = dirname(dir);
  }
  throw new Error('not inside a loadfleet clone');
}

const PACKAGE_DIR = join(cloneRoot(), 'test', 'llama', 'node_modules', 'node-llama-cpp');

/** Why the real-inference tests cannot run here, or null when node-llama-cpp is installed. */
export function nodeLlamaCppMissing(): string | null {
  return existsSync(join(PACKAGE_DIR, 'package.json'))
    ? null
    : 'node-llama-cpp is not installed (test-only, about 720 MB): run `npm run test:deps`';
}

/** Loads node-llama-cpp from test/llama/node_modules. */
export async function loadNodeLlamaCpp(): Promise<NodeLlamaCpp> {
  const pkg = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
    exports?: { '.'?: { import?: string } };
    main?: string;
  };
  const entry = pkg.exports?.['.']?.import ?? pkg.main ?? 'index.js';
  return (await import(pathToFileURL(join(PACKAGE_DIR, entry)).href)) as NodeLlamaCpp;
}
