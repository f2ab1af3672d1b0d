// Exact JSON for ns epoch times: they exceed 2^53, so they live as bigint in code and are written
// as exact integer literals (JSON.stringify alone throws on bigint; float64 would round them).

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

// Integer literals of 16+ digits outside strings: the ones a double may not hold exactly. Digits
// after a decimal point or in an exponent (0.3333333333333333) are not an integer literal.
const BIG_LITERAL = /("(?:[^"\\]|\\.)*")|(?<![.\deE+-])(-?\d{16,})(?![.eE\d])/g;

/** JSON.parse that returns integers of 16 or more digits as bigint (the reader side of stringifyExact). */
export function parseExact<T = unknown>(text: string): T {
  const marked = text.replace(BIG_LITERAL, (m, str: string | undefined, big: string | undefined) =>
    str !== undefined ? m : `"${MARK}${big}"`,
  );
  return JSON.parse(marked, (_k, v: unknown) => (typeof v === 'string' && v.startsWith(MARK) ? BigInt(v.slice(MARK.length)) : v)) as T;
}
