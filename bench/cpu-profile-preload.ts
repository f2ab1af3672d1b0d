// Preloaded with `node --import` (NODE_OPTIONS, which may not carry --cpu-prof itself): profiles
// an agent process with the inspector and writes <dir>/agent.<pid>.cpuprofile as it exits.
// Only agents (and the bare undici client, to compare) are profiled; the directory comes from LOADFLEET_CPU_PROF_DIR.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.LOADFLEET_CPU_PROF_DIR;
const script = process.argv[1] ?? '';
if (dir && (script.includes('agent/main.js') || script.includes('bare-undici-client'))) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  // A same-thread session answers synchronously, so the profile is written before the exit.
  process.on('exit', () => {
    session.post('Profiler.stop', (err, res) => {
      if (!err) writeFileSync(join(dir, `agent.${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
  });
}
