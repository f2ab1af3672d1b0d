// Exact JSON for ns epoch times: they exceed 2^53, so they live as bigint in code and are written
// as exact integer literals (JSON.stringify alone throws on bigint; float64 would round them).

import { parse as parseLossless } from 'lossless-json';

// A marker no artifact string contains; bigint values travel through JSON.stringify as marked strings.
const MARK = '~lf-bigint~';
const MARKED = /"~lf-bigint~(-?\d+)"/g;

function replacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? MARK + value.toString() : value;
}

/** JSON.stringify that writes bigint values as exact integer literals. */
export function stringifyExact(value: unknown, indent?: number): string {
  return JSON.stringify(value, replacer, indent).replace(MARKED, '$1');
}

// The reader is lossless-json's parser: it hands every number literal over as its text, so no
// pattern has to find integers inside the document (a regex also matched the digits after a
// decimal point, and threw on an ordinary float like 0.30000000000000004).
const INTEGER_LITERAL = /^-?\d+$/;
/** Integers with this many digits or more may exceed 2^53 and are read as bigint. */
const BIG_DIGITS = 16;

function readNumber(text: string): number | bigint {
  const digits = text.startsWith('-') ? text.length - 1 : text.length;
  return INTEGER_LITERAL.test(text) && digits >= BIG_DIGITS ? BigInt(text) : Number(text);
}

/** JSON.parse that returns integers of 16 or more digits as bigint (the reader side of stringifyExact); every other number is a double. */
export function parseExact<T = unknown>(text: string): T {
  return parseLossless(text, null, readNumber) as T;
}
