// Preloaded into a coordinator under test (NODE_OPTIONS=--import …/crash-at-rename.js): the process
// SIGKILLs itself at the moment it would rename a file named LOADFLEET_TEST_CRASH_AT_RENAME into
// place (e.g. requests.ndjson, renamed once every agent's `final` is acknowledged and the run
// directory is being written), so a test can stop it at that exact point of a run.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { basename } from 'node:path';

const name = process.env.LOADFLEET_TEST_CRASH_AT_RENAME;
if (name) {
  const rename = fs.promises.rename;
  fs.promises.rename = (from, to) => {
    if (basename(String(to)) === name) process.kill(process.pid, 'SIGKILL');
    return rename(from, to);
  };
  syncBuiltinESMExports();
}
