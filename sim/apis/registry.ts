// Every API engine-sim serves, found in this folder: a module that exports `api` (a SimApi) is
// one, and its paths are routes. Adding an API is adding its module here. The modules are loaded
// once, when the registry is first imported (a top-level await), so the routes are known
// synchronously. A module imports only engine-sim's own files, never this registry or server.ts.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { SimApi } from './contract.js';

const HERE = dirname(fileURLToPath(import.meta.url));
// One word-and-dash name, .ts in the sources (tests) and .js when built; never tests, maps or this file.
const MODULE_FILE = /^[a-z0-9-]+\.(?:ts|js)$/;

async function load(): Promise<SimApi[]> {
  const files = readdirSync(HERE).filter((f) => MODULE_FILE.test(f) && !f.startsWith('registry.'));
  const loaded = await Promise.all(files.map((f) => import(pathToFileURL(join(HERE, f)).href) as Promise<{ api?: SimApi }>));
  return loaded.flatMap((m) => (m.api ? [m.api] : [])).sort((a, b) => a.name.localeCompare(b.name));
}

/** Every API engine-sim serves. */
export const SIM_APIS: readonly SimApi[] = await load();

/** The API served at each path. */
export const API_BY_PATH: ReadonlyMap<string, SimApi> = new Map(SIM_APIS.flatMap((a) => a.paths.map((p) => [p, a] as const)));
