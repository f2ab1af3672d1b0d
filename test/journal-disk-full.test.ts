// A results disk that fills up mid-run (a 192 KiB tmpfs as --out; root only: mount): the
// coordinator's journal cannot flush, so it acknowledges nothing more, ends the run with an error
// naming the journal and ENOSPC, and tells its agent why; the agent stops its load and keeps its
// spool, which holds every request the journal does (nothing acknowledged is only on the full disk),
// offering it to a coordinator that comes back. Once space is freed, `coordinator resume` recovers
// the run and the agent hands its spool over: every request it finished is in the run once.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSpool } from '../agent/spool.js';
import { parseJournal } from '../coordinator/journal/frame.js';
import { decodeAgentMessage } from '../shared/protocol.js';
import { constantRatePlan, listeningCoordinator, readRequests, readRunJson, startNode, tempDir, waitFor, writePlan } from './harness.js';

const root = process.getuid?.() === 0;

describe.skipIf(!root)('the results disk fills up mid-run', () => {
  const work = tempDir();
  const out = join(work, 'out');
  mkdirSync(out);
  let mounted = false;
  afterAll(() => {
    if (mounted) execFileSync('umount', [out]);
  });

  it('nothing unwritten is acknowledged: the run ends with LF_JOURNAL_WRITE (path, ENOSPC), the agent keeps its spool and says why; space freed, the run is recovered with every request once', async () => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=192k', 'tmpfs', out]);
    mounted = true;
    const env = { LOADFLEET_TOKEN: 'full' };
    const { coord, url } = await listeningCoordinator(
      ['--agents', '1', '--max-agent-loss', '1', '--plan', writePlan(work, constantRatePlan('full', 30, 40)), '--out', out],
      env,
    );
    const spool = join(work, 'spool');
    // The agent outlives its coordinator offering its spool (for up to 60 s here).
    const agent = startNode('agent/main.js', ['--coordinator', url, '--id', 'a1', '--spool-dir', spool, '--coordinator-wait-s', '60'], env);
    const refused = waitFor(
      agent.child.stderr!,
      /the coordinator refused run \S+ \(the coordinator's journal failed \(ENOSPC\): not taken, keep it in the spool\): stopping the load/,
      60_000,
    );
    const offering = waitFor(agent.child.stderr!, /spool file\(s\) kept in \S+; trying to hand them over/, 60_000);
    const c = await coord.done;
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(/error LF_JOURNAL_WRITE: could not write the run's journal \S+\/journal\/run\.journal: ENOSPC/);
    await refused;
    await offering;

    const runDir = join(out, readdirSync(out)[0]!);
    const journal = parseJournal(readFileSync(join(runDir, 'journal', 'run.journal')));
    expect(journal.damage).toBeNull();
    const durable = new Set<number>();
    for (const f of journal.frames) {
      if (f.kind !== 'message') continue;
      const m = decodeAgentMessage(f.message.raw);
      if (m.type === 'records') for (const r of m.rows) durable.add(r.request_index);
    }
    expect(durable.size).toBeGreaterThan(0);
    const spoolFiles = readdirSync(spool).filter((n) => n.endsWith('.spool.ndjson'));
    expect(spoolFiles).toHaveLength(1);
    const spooled = new Set((await readSpool(join(spool, spoolFiles[0]!))).entries.map((e) => e.record.request_index));
    // The agent never deleted what the coordinator could not keep: the spool holds more than the journal.
    for (const i of durable) expect(spooled.has(i)).toBe(true);
    expect(spooled.size).toBeGreaterThan(durable.size);

    // Space freed: the run is recovered from its journal, and the agent, still offering, hands its
    // spool over to it. Every request the agent finished is in requests.ndjson once.
    execFileSync('mount', ['-o', 'remount,size=64m', out]);
    const resumed = startNode('coordinator/main.js', ['resume', runDir], env);
    const [r, a] = await Promise.all([resumed.done, agent.done]);
    // The agent's spool came from an upload, so it counts as lost (within --max-agent-loss 1): degraded.
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stderr).toContain(`uploaded ${spooled.size} spooled requests`);
    const rows = readRequests(runDir).map((row) => Number(row.request_index));
    expect(rows.length).toBe(spooled.size);
    expect(new Set(rows)).toEqual(spooled);
    expect(readRunJson(runDir).recovered).toBeDefined();
  }, 120_000);
});
