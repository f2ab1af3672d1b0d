// The one way a finished run's files are read back: parse exactly (ns times as bigint), check the
// document against its published definition, and hand back its type, or refuse with every problem
// at its JSON path (`classes.chat.windows: is required`) under one stable code.
import { readFile } from 'node:fs/promises';
import type { Static, TSchema } from '@sinclair/typebox';
import { ErrorCode, ExitCode, LoadfleetError } from './errors.js';
import { parseExact } from './json.js';
import { checkShape } from './schema-problems.js';
import { problemLines, rootCtx } from './validate-kit.js';

/** How many problems the error lists (a file of another kind would list hundreds). */
const SHOWN = 20;

/** The problems of `doc` against `schema` as `<path>: <what>` lines (empty: it fits). */
export function artifactProblems(schema: TSchema, doc: unknown): string[] {
  const ctx = rootCtx();
  checkShape(ctx, schema, doc);
  return problemLines(ctx.problems, Object.keys(schema['properties'] ?? {}));
}

/** `doc` as the type `schema` defines, or LF_ARTIFACT_INVALID naming `path` and every problem. */
export function checkArtifact<T extends TSchema>(schema: T, doc: unknown, path: string): Static<T> {
  const problems = artifactProblems(schema, doc);
  if (problems.length === 0) return doc as Static<T>;
  const more = problems.length > SHOWN ? [`… and ${problems.length - SHOWN} more`] : [];
  throw new LoadfleetError(ErrorCode.ARTIFACT_INVALID, `${path} is not a valid ${schemaName(schema)} (${problems.length} problems)`, {
    exitCode: ExitCode.INVALID_INPUT,
    details: [...problems.slice(0, SHOWN), ...more],
  });
}

/** Reads `path` (exact JSON) and checks it against `schema`. */
export async function readArtifact<T extends TSchema>(schema: T, path: string): Promise<Static<T>> {
  return checkArtifact(schema, await readDocument(path), path);
}

/** The parsed document of `path`, or LF_ARTIFACT_INVALID when it cannot be read or is not JSON. */
export async function readDocument(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new LoadfleetError(ErrorCode.ARTIFACT_INVALID, `cannot read ${path}: ${(err as Error).message}`, {
      exitCode: ExitCode.INVALID_INPUT,
    });
  }
  try {
    return parseExact(text);
  } catch (err) {
    throw new LoadfleetError(ErrorCode.ARTIFACT_INVALID, `${path} is not JSON: ${(err as Error).message}`, {
      exitCode: ExitCode.INVALID_INPUT,
    });
  }
}

function schemaName(schema: TSchema): string {
  return typeof schema['title'] === 'string' ? schema['title'] : typeof schema['description'] === 'string' ? schema['description'] : 'file';
}
