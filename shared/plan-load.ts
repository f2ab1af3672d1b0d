// Turns plan text or a plan file into a validated Plan. Syntax errors are reported the same way as
// validation problems (`$: …` lines inside a PlanInvalidError), so the CLI has one way to show both.
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { ErrorCode, ExitCode, LoadfleetError, PlanInvalidError } from './errors.js';
import type { Plan } from './plan.js';
import { validatePlan } from './plan-validate.js';
import type { Segment } from './validate-kit.js';
import { pathOf } from './validate-kit.js';
import { hasWorkloadFiles, readWorkloadInputs, resolveWorkloadPaths } from './workload-files.js';

/**
 * Parses JSON (or YAML for `.yaml`/`.yml` names and text that does not start like JSON) and
 * validates it; `fields` (a command-line override, such as `--records`) replace top-level fields
 * first, so they are checked as if the file said them.
 */
export function parsePlanText(text: string, sourceName: string, fields: Record<string, unknown> = {}): Plan {
  const parsed = parseDocumentText(text, sourceName);
  if (!parsed.ok) throw new PlanInvalidError(parsed.problems, sourceName);
  const doc =
    Object.keys(fields).length > 0 && typeof parsed.value === 'object' ? { ...(parsed.value as object), ...fields } : parsed.value;
  const result = validatePlan(doc);
  if (!result.ok) throw new PlanInvalidError(result.problems, sourceName);
  return result.plan;
}

/** Reads and parses a plan file; an unreadable file is LF_PLAN_UNREADABLE, a bad one LF_PLAN_INVALID. */
export async function loadPlanFile(path: string, fields: Record<string, unknown> = {}): Promise<Plan> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new LoadfleetError(ErrorCode.PLAN_UNREADABLE, `cannot read plan ${path}: ${reason}`, {
      exitCode: ExitCode.INVALID_INPUT,
      cause: err,
    });
  }
  // Trace and dataset paths are relative to the plan file; their rows are checked now, before any fleet exists.
  const plan = resolveWorkloadPaths(parsePlanText(text, path, fields), dirname(path));
  if (hasWorkloadFiles(plan)) {
    const { problems } = await readWorkloadInputs(plan);
    if (problems.length > 0) throw new PlanInvalidError(problems, path);
  }
  return plan;
}

/** A parsed JSON/YAML document, or its syntax problems as `$: …` lines. */
export type Parsed = { ok: true; value: unknown } | { ok: false; problems: string[] };

/** Parses JSON or YAML text (the same rules for every file format: plans, experiments, sweeps). */
export function parseDocumentText(text: string, sourceName: string): Parsed {
  const body = text.replace(/^\uFEFF/, ''); // editors on Windows add a BOM that JSON.parse rejects
  return isYamlSource(body, sourceName) ? parseYaml(body) : parseJson(body);
}

// A name decides when it can; otherwise JSON text starts with `{` or `[` (a broken JSON file should
// get a JSON error, not a confusing YAML one).
function isYamlSource(text: string, sourceName: string): boolean {
  if (/\.ya?ml$/i.test(sourceName)) return true;
  return !/^\s*[{[]/.test(text);
}

function parseJson(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, problems: [jsonProblem(text, err instanceof Error ? err.message : String(err))] };
  }
}

// V8 reports a character offset (and, in newer versions, also line/column) inside the message; we
// turn the offset into line/column ourselves so the wording is the same on every Node version.
function jsonProblem(text: string, message: string): string {
  const match = /\s*in JSON at position (\d+)(?: \(line \d+ column \d+\))?$/.exec(message);
  if (!match) return `$: invalid JSON: ${message}`;
  const { line, col } = lineColumn(text, Number(match[1]));
  return `$: invalid JSON at line ${line}, column ${col}: ${message.slice(0, match.index)}`;
}

function lineColumn(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, col: offset - before.lastIndexOf('\n') };
}

function parseYaml(text: string): Parsed {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    const problems = doc.errors.map((e) => {
      const { line, col } = lineCounter.linePos(e.pos[0]);
      return `$: invalid YAML at line ${line}, column ${col}: ${e.message}`;
    });
    return { ok: false, problems };
  }
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (err) {
    // toJS refuses documents that expand aliases excessively ("billion laughs").
    return { ok: false, problems: [`$: invalid YAML: ${err instanceof Error ? err.message : String(err)}`] };
  }
  const odd = nonJsonValue(value, []);
  return odd
    ? { ok: false, problems: [`${pathOf(odd.at)}: ${odd.what} (a YAML 1.1 type); only JSON values are allowed`] }
    : { ok: true, value };
}

// A `%YAML 1.1` document has types JSON lacks; as objects they would pass for objects with odd keys
// (binary data as `target` read as keys "0", "1", …), so the first one is refused where it is.
function nonJsonValue(v: unknown, at: Segment[]): { at: Segment[]; what: string } | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) {
      const found = nonJsonValue(x, [...at, i]);
      if (found) return found;
    }
    return undefined;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) {
    const what =
      v instanceof Date
        ? 'a timestamp'
        : v instanceof Uint8Array
          ? 'binary data'
          : v instanceof Set
            ? 'a set'
            : v instanceof Map
              ? 'an ordered map'
              : 'not plain data';
    return { at, what: `is ${what}` };
  }
  for (const [k, x] of Object.entries(v)) {
    const found = nonJsonValue(x, [...at, k]);
    if (found) return found;
  }
  return undefined;
}
