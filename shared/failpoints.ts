// Named failpoints on the coordinator's durable path, as etcd's gofail has them: each moment a
// crash could leave a different state on disk has a name, compiled in and off by default. A test
// switches some on for one process with LOADFLEET_FAILPOINTS, e.g.
//   LOADFLEET_FAILPOINTS='journal.flush.before-sync=kill@40|recover.reopen=throw'
// `kill`: SIGKILL this process there (nothing after it runs: no handler, no flush); `throw`: an I/O
// error (code EIO) thrown there; `@N`: at the Nth pass only (default the first). A failpoint that
// passes a detail (the run directory's: the file's name) can be armed for that detail alone:
// `rundir.rename.before:run.json=kill`. Unset, a failpoint is one comparison with null
// (bench/failpoints.ts measures it).

/** Every failpoint, in the order a run reaches them; an unknown name in the variable is an error. */
export const FAILPOINTS = [
  /** The journal's header written and synced, before any agent is armed. */
  'journal.header.synced',
  /** A frame handed to the journal, before it joins a group. */
  'journal.append',
  /** A group about to be written. */
  'journal.flush.before-write',
  /** A group written, before its fdatasync: in the page cache, not yet durable. */
  'journal.flush.before-sync',
  /** A group synced, before its frames are acknowledged. */
  'journal.flush.after-sync',
  /** A run-directory file about to be written to its temporary name. */
  'rundir.write',
  /** A run-directory file written, before its rename into place. */
  'rundir.rename.before',
  /** A run-directory file renamed into place. */
  'rundir.rename.after',
  /** The run directory written, before its files and itself are fsync'ed. */
  'rundir.sync.before',
  /** The run directory synced, before the journal is removed. */
  'journal.remove.before',
  /** The journal removed: the run is finished on disk. */
  'journal.remove.after',
  /** Recovery: the journal read, nothing changed yet. */
  'recover.read',
  /** Recovery: before a zero or torn tail is cut off. */
  'recover.truncate',
  /** Recovery: the journal reopened for appending, before it is synced. */
  'recover.reopen',
  /** Recovery: half of the journal's messages replayed. */
  'recover.replay',
  /** Recovery: everything replayed and synced, before the fleet listens for its agents. */
  'recover.listen',
  /** Recovery: an agent is back, before it is told its durable mark. */
  'recover.rejoin',
] as const;

/** One failpoint's name. */
export type FailpointName = (typeof FAILPOINTS)[number];

/** What an armed failpoint does, and at which pass. */
export interface FailpointAction {
  action: 'kill' | 'throw';
  at: number;
}

/** Parses LOADFLEET_FAILPOINTS (`name[:detail]=action[@N]`, separated by `|`); throws on an unknown name or action. */
export function parseFailpoints(spec: string): Map<string, FailpointAction> {
  const armed = new Map<string, FailpointAction>();
  for (const term of spec.split('|').map((t) => t.trim())) {
    if (term === '') continue;
    const m = /^([\w.-]+)(:[^=|]+)?=(kill|throw)(?:@(\d+))?$/.exec(term);
    if (!m) throw new Error(`LOADFLEET_FAILPOINTS: "${term}" is not name[:detail]=kill|throw[@N]`);
    if (!(FAILPOINTS as readonly string[]).includes(m[1]!))
      throw new Error(`LOADFLEET_FAILPOINTS: no failpoint named ${m[1]} (known: ${FAILPOINTS.join(', ')})`);
    armed.set(`${m[1]}${m[2] ?? ''}`, { action: m[3] as FailpointAction['action'], at: Math.max(1, Number(m[4] ?? 1)) });
  }
  return armed;
}

/** The armed failpoints of one process, and how often each was passed. */
export class ArmedFailpoints {
  private readonly passes = new Map<string, number>();

  constructor(
    private readonly armed: Map<string, FailpointAction>,
    private readonly kill: () => void = () => process.kill(process.pid, 'SIGKILL'),
    private readonly say: (line: string) => void = (line) => void process.stderr.write(line),
  ) {}

  /** One pass of `name` (with `detail`): kills or throws when it is armed for this pass. */
  pass(name: string, detail?: string): void {
    if (detail !== undefined && this.armed.has(`${name}:${detail}`)) name = `${name}:${detail}`;
    const a = this.armed.get(name);
    if (!a) return;
    const n = (this.passes.get(name) ?? 0) + 1;
    this.passes.set(name, n);
    if (n !== a.at) return;
    // On stderr (a pipe or a file: written at once), so a test can tell a kill here from any other death.
    this.say(`[failpoint] ${name} (${a.action}, pass ${n})\n`);
    if (a.action === 'kill') this.kill();
    throw Object.assign(new Error(`failpoint ${name}`), { code: 'EIO' });
  }
}

const spec = process.env.LOADFLEET_FAILPOINTS;
// Built once: null when nothing is armed, so an unarmed failpoint costs one comparison.
const armed: ArmedFailpoints | null = spec ? new ArmedFailpoints(parseFailpoints(spec)) : null;

/** Marks a crash point: does nothing unless LOADFLEET_FAILPOINTS armed `name` (or `name:detail`). */
export function failpoint(name: FailpointName, detail?: string): void {
  if (armed === null) return;
  armed.pass(name, detail);
}
