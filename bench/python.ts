// Finding a Python that has aiohttp: the first `python3` on PATH may be a pyenv one without the
// Debian packages, while /usr/bin/python3 has python3-aiohttp.
import { spawnSync } from 'node:child_process';

const CANDIDATES = ['python3', '/usr/bin/python3', 'python'];

/** The first interpreter that can import aiohttp, or the reason there is none. */
export function findAiohttpPython(): { python: string } | { missing: string } {
  for (const python of CANDIDATES) {
    const r = spawnSync(python, ['-c', 'import aiohttp'], { encoding: 'utf8' });
    if (r.status === 0) return { python };
  }
  return { missing: 'no python3 with aiohttp found (install it with: apt-get install -y python3-aiohttp)' };
}
