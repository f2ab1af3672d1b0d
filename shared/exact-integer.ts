// An integer that may exceed 2^53 (ns epoch times): parseExact (json.ts) reads it as a bigint, a
// smaller one stays a number. The published JSON Schema says `integer`; the check accepts both forms.
import { Kind, type TUnsafe, Type, TypeRegistry } from '@sinclair/typebox';

const KIND = 'LoadfleetExactInteger';

if (!TypeRegistry.Has(KIND))
  TypeRegistry.Set(KIND, (_schema, value) => typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value)));

/** An exact JSON integer, read as bigint when large. */
export function exactInteger(description: string): TUnsafe<bigint | number> {
  return Type.Unsafe<bigint | number>({ [Kind]: KIND, type: 'integer', description });
}
