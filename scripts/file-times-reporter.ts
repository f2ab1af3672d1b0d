// A vitest reporter that prints the per-file time table (scripts/file-times.ts) once a run ends,
// beside the default reporter: `npm test`, `npm run check` and CI end with it.
import type { Reporter, TestModule } from 'vitest/node';
import { type FileTime, fileTimesTable } from './file-times.js';

/** A file's wall time in its worker: its import and set-up as well as its tests and hooks. */
function total(m: TestModule): number {
  const d = m.diagnostic();
  return d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
}

/** An error's first line, cut to one screen line. */
function firstLine(message: string | undefined): string {
  const line = (message ?? 'failed').split('\n', 1)[0]!.trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

export default class FileTimesReporter implements Reporter {
  private started = Date.now();
  private readonly startedAt = new Map<string, number>();
  private readonly endedAt = new Map<string, number>();

  onTestRunStart(): void {
    this.started = Date.now();
  }

  onTestModuleStart(m: TestModule): void {
    this.startedAt.set(m.id, Date.now());
  }

  onTestModuleEnd(m: TestModule): void {
    this.endedAt.set(m.id, Date.now());
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const files: FileTime[] = modules.map((m) => {
      let tests = 0;
      let slowest: FileTime['slowest'];
      const failures: NonNullable<FileTime['failures']> = [];
      for (const t of m.children.allTests()) {
        tests++;
        const ms = t.diagnostic()?.duration ?? 0;
        if (!slowest || ms > slowest.ms) slowest = { name: t.fullName, ms };
        const r = t.result();
        if (r.state === 'failed') failures.push({ name: t.fullName, error: firstLine(r.errors?.[0]?.message) });
      }
      for (const e of m.errors()) failures.push({ name: '(the file)', error: firstLine(e.message) });
      return {
        project: m.project.name,
        file: m.relativeModuleId,
        ms: total(m),
        tests,
        failed: m.state() === 'failed',
        failures,
        ...(slowest && { slowest }),
        ...(this.startedAt.has(m.id) &&
          this.endedAt.has(m.id) && { startedMs: this.startedAt.get(m.id)!, endedMs: this.endedAt.get(m.id)! }),
      };
    });
    if (files.length > 0) console.log(`\n${fileTimesTable(files, Date.now() - this.started).join('\n')}`);
  }
}
