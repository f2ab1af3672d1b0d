// Every API loadfleet can load, found in this folder: a module that exports `api` (an ApiModule)
// is one. Adding an API is adding its module here; the plan schema's API enum, validation's
// rules, prompt counting, the doctor's probes and the agent's adapters all read it from this
// registry. The modules are loaded once, when the registry is first imported (a top-level
// await), so every reader sees the whole list synchronously.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ApiDescriptor, ApiModule } from './contract.js';

const HERE = dirname(fileURLToPath(import.meta.url));
// One word-and-dash name, .ts in the sources (tests) and .js when built; never tests, maps or this file.
const MODULE_FILE = /^[a-z0-9-]+\.(?:ts|js)$/;

async function load(): Promise<ApiModule[]> {
  const files = readdirSync(HERE).filter((f) => MODULE_FILE.test(f) && !f.startsWith('registry.'));
  const loaded = await Promise.all(files.map((f) => import(pathToFileURL(join(HERE, f)).href) as Promise<{ api?: ApiModule }>));
  const modules = loaded.flatMap((m) => (m.api ? [m.api] : []));
  const names = new Set<string>();
  for (const m of modules) {
    if (names.has(m.descriptor.name)) throw new Error(`two API modules are named "${m.descriptor.name}"`);
    names.add(m.descriptor.name);
  }
  return modules.sort((a, b) => a.descriptor.order - b.descriptor.order || a.descriptor.name.localeCompare(b.descriptor.name));
}

const MODULES: ApiModule[] = await load();
const BY_NAME = new Map(MODULES.map((m) => [m.descriptor.name, m]));

/** Every API's plan name, in order (the plan schema's enum). */
export const API_NAMES: readonly string[] = MODULES.map((m) => m.descriptor.name);

/** Every API's descriptor, in order. */
export const API_DESCRIPTORS: readonly ApiDescriptor[] = MODULES.map((m) => m.descriptor);

/**
 * Every API's descriptor now, in order: the modules of this folder and any registered since
 * (registerApi). What reads the list when it acts (the doctor's probes) reads it here.
 */
export function apiDescriptors(): readonly ApiDescriptor[] {
  return MODULES.map((m) => m.descriptor);
}

/**
 * Adds an API module found elsewhere than this folder (a test's own API); returns its removal.
 * The plan schema's enum (API_NAMES) was read at load and stays the folder's.
 */
export function registerApi(module: ApiModule): () => void {
  if (BY_NAME.has(module.descriptor.name)) throw new Error(`two API modules are named "${module.descriptor.name}"`);
  MODULES.push(module);
  MODULES.sort((a, b) => a.descriptor.order - b.descriptor.order || a.descriptor.name.localeCompare(b.descriptor.name));
  BY_NAME.set(module.descriptor.name, module);
  return () => {
    MODULES.splice(MODULES.indexOf(module), 1);
    BY_NAME.delete(module.descriptor.name);
  };
}

/** The module of a plan's API name; throws for a name no module has (plan validation refuses those first). */
export function apiModule(name: string): ApiModule {
  const m = BY_NAME.get(name);
  if (!m) throw new Error(`no API is named "${name}" (known: ${API_NAMES.join(', ')})`);
  return m;
}

/** The descriptor of a plan's API name. */
export function apiDescriptor(name: string): ApiDescriptor {
  return apiModule(name).descriptor;
}

/** The names of the APIs whose descriptor says `flag`, quoted and joined with "or" (validation's messages). */
export function apisWhere(flag: (d: ApiDescriptor) => boolean): string {
  return API_DESCRIPTORS.filter(flag)
    .map((d) => `"${d.name}"`)
    .join(' or ');
}
