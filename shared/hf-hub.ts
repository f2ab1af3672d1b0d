// A tokenizer by Hugging Face model id (`target.tokenizer: "org/name"` or `"org/name@revision"`):
// its tokenizer.json (and tokenizer_config.json, for the chat template) fetched once into the hub
// cache in the hub's own layout, as vLLM and AIPerf do, so a host that already ran the model has
// it: <cache>/models--org--name/snapshots/<commit>/<file>, refs/<revision> → commit. The cache is
// $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub; the hub is $HF_ENDPOINT (else
// https://huggingface.co), with $HF_TOKEN (or $HUGGING_FACE_HUB_TOKEN) for gated models; with
// $HF_HUB_OFFLINE=1 only the cache is read. A cached snapshot is used without asking the hub again.
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** A model id, with its revision. */
export interface ModelId {
  repo: string;
  revision: string;
}

const REPO = /^[A-Za-z0-9][\w.-]*(\/[\w.-]+)?$/;
const COMMIT = /^[0-9a-f]{40}$/;
const FILES = ['tokenizer.json', 'tokenizer_config.json'] as const;
/** One hub request may take this long. */
const FETCH_TIMEOUT_MS = 60_000;

/** `spec` as a model id, or null when it names a file (it exists, ends in .json, or looks like a path). */
export function modelIdOf(spec: string): ModelId | null {
  if (existsSync(spec) || /\.json$/i.test(spec) || /^[./~]|\\/.test(spec)) return null;
  const [repo, revision = 'main', extra] = spec.split('@');
  if (extra !== undefined || !REPO.test(repo!) || revision === '') return null;
  return { repo: repo!, revision };
}

/** The hub cache directory these variables name. */
export function hubCache(env: NodeJS.ProcessEnv = process.env): string {
  return env.HF_HUB_CACHE || (env.HF_HOME ? join(env.HF_HOME, 'hub') : join(homedir(), '.cache', 'huggingface', 'hub'));
}

/** The local tokenizer.json of `id`, fetched into the cache unless it is there; throws a readable error. */
export async function hubTokenizer(id: ModelId, env: NodeJS.ProcessEnv = process.env): Promise<{ path: string; note: string }> {
  const repoDir = join(hubCache(env), `models--${id.repo.replaceAll('/', '--')}`);
  const cached = await cachedSnapshot(repoDir, id.revision);
  if (cached) return { path: join(cached, 'tokenizer.json'), note: `${id.repo}@${id.revision} from the cache ${cached}` };
  if (env.HF_HUB_OFFLINE === '1' || env.TRANSFORMERS_OFFLINE === '1')
    throw new Error(`${id.repo}@${id.revision} is not in the hub cache ${repoDir} and HF_HUB_OFFLINE is set`);
  const endpoint = (env.HF_ENDPOINT || 'https://huggingface.co').replace(/\/+$/, '');
  const token = env.HF_TOKEN || env.HUGGING_FACE_HUB_TOKEN;
  const got: Partial<Record<(typeof FILES)[number], Buffer>> = {};
  let commit = COMMIT.test(id.revision) ? id.revision : undefined;
  for (const file of FILES) {
    const url = `${endpoint}/${id.repo}/resolve/${encodeURIComponent(id.revision)}/${file}`;
    let res: Response;
    try {
      res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    } catch (err) {
      throw new Error(`cannot reach ${url}: ${(err as Error).message}`);
    }
    // The config is optional (no chat template then); the tokenizer is not.
    if (res.status === 404 && file !== 'tokenizer.json') continue;
    if (res.status === 401 || res.status === 403)
      throw new Error(
        `${url}: HTTP ${res.status}${token ? ' (HF_TOKEN was sent: does it have access?)' : ' (a gated model? set HF_TOKEN)'}`,
      );
    if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
    commit ??= res.headers.get('x-repo-commit') ?? undefined;
    got[file] = Buffer.from(await res.arrayBuffer());
  }
  // Without a commit from the hub, the snapshot is named for the revision.
  const snapshot = join(repoDir, 'snapshots', commit ?? id.revision);
  await mkdir(snapshot, { recursive: true });
  for (const [file, bytes] of Object.entries(got)) await atomicWrite(join(snapshot, file), bytes);
  if (!COMMIT.test(id.revision)) {
    await mkdir(join(repoDir, 'refs'), { recursive: true });
    await atomicWrite(join(repoDir, 'refs', id.revision), Buffer.from(commit ?? id.revision));
  }
  return { path: join(snapshot, 'tokenizer.json'), note: `${id.repo}@${id.revision} fetched from ${endpoint} into ${snapshot}` };
}

// The snapshot directory of `revision` (a commit, or a ref the cache names), if it holds a tokenizer.json.
async function cachedSnapshot(repoDir: string, revision: string): Promise<string | undefined> {
  let commit = revision;
  if (!COMMIT.test(revision)) {
    try {
      commit = (await readFile(join(repoDir, 'refs', revision), 'utf8')).trim();
    } catch {
      return undefined;
    }
  }
  const dir = join(repoDir, 'snapshots', commit);
  return existsSync(join(dir, 'tokenizer.json')) ? dir : undefined;
}

// Another process reading the cache never sees half a file.
async function atomicWrite(path: string, bytes: Buffer): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, bytes);
  await rename(tmp, path);
}
