// Pure parser of the Prometheus text exposition format (0.0.4, as vLLM and llm-d serve it): one
// sample per line, `name{labels} value [timestamp]`, `#` comments with HELP/TYPE. It never throws:
// a line it cannot read becomes a problem with its line number, so a garbled scrape is recorded
// as that sample's error and the run goes on.

/** One sample line: a series (name + labels) and its value at scrape time. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** The exposition's own timestamp (ms since the epoch), when the line carries one. */
  timestampMs: number | null;
}

/** What one exposition text held. */
export interface PromParse {
  samples: PromSample[];
  /** Family name → declared type (`counter`, `gauge`, `histogram`, …). */
  types: Map<string, string>;
  /** `line N: what is wrong`, one per line that could not be read. */
  problems: string[];
}

// Metric names may carry colons (recording rules, vLLM's `vllm:` prefix); label names may not.
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

/** Parses a whole exposition text. */
export function parseExposition(text: string): PromParse {
  const out: PromParse = { samples: [], types: new Map(), problems: [] };
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    if (line.trimStart().startsWith('#')) {
      readComment(line.trimStart(), out);
      return;
    }
    const parsed = parseSampleLine(line.trim());
    if (typeof parsed === 'string') out.problems.push(`line ${i + 1}: ${parsed}`);
    else out.samples.push(parsed);
  });
  return out;
}

// `# TYPE name type` is kept; HELP and free comments carry nothing the analysis needs.
function readComment(line: string, out: PromParse): void {
  const m = /^#\s+TYPE\s+(\S+)\s+(\S+)\s*$/.exec(line);
  if (m) out.types.set(m[1]!, m[2]!);
}

/** One sample line, or a description of why it is not one. */
export function parseSampleLine(line: string): PromSample | string {
  const name = NAME.exec(line)?.[0];
  if (!name) return `expected a metric name at ${JSON.stringify(line.slice(0, 40))}`;
  let rest = line.slice(name.length);
  let labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    const read = readLabels(rest);
    if (typeof read === 'string') return `${name}: ${read}`;
    labels = read.labels;
    rest = rest.slice(read.length);
  }
  // An OpenMetrics exemplar (`… # {trace_id="…"} 1`) follows the value; it is not part of it.
  const exemplar = rest.indexOf(' # ');
  if (exemplar !== -1) rest = rest.slice(0, exemplar);
  const fields = rest.trim().split(/[ \t]+/);
  if (rest.trim() === '' || fields.length > 2)
    return `${name}: expected "value [timestamp]" after the name, got ${JSON.stringify(rest.trim())}`;
  const value = parseValue(fields[0]!);
  if (value === null) return `${name}: ${JSON.stringify(fields[0])} is not a number`;
  let timestampMs: number | null = null;
  if (fields.length === 2) {
    if (!/^-?\d+$/.test(fields[1]!)) return `${name}: timestamp ${JSON.stringify(fields[1])} is not an integer`;
    timestampMs = Number(fields[1]);
  }
  return { name, labels, value, timestampMs };
}

/** A sample value: a float, or NaN / +Inf / -Inf as the format spells them. */
export function parseValue(text: string): number | null {
  switch (text) {
    case 'NaN':
      return Number.NaN;
    case '+Inf':
    case 'Inf':
      return Number.POSITIVE_INFINITY;
    case '-Inf':
      return Number.NEGATIVE_INFINITY;
  }
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return null;
  return Number(text);
}

// `{a="x",b="y\"z"}` → labels and how many characters it took; escapes \\ \" \n are undone.
function readLabels(text: string): { labels: Record<string, string>; length: number } | string {
  const labels: Record<string, string> = {};
  let i = 1;
  const skipSpace = (): void => {
    while (text[i] === ' ' || text[i] === '\t') i++;
  };
  for (;;) {
    skipSpace();
    if (text[i] === '}') return { labels, length: i + 1 };
    const name = LABEL_NAME.exec(text.slice(i))?.[0];
    if (!name) return `bad label name at ${JSON.stringify(text.slice(i, i + 20))}`;
    i += name.length;
    skipSpace();
    if (text[i] !== '=') return `expected = after label ${name}`;
    i++;
    skipSpace();
    if (text[i] !== '"') return `label ${name}: expected a quoted value`;
    i++;
    let value = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) return `label ${name}: unterminated value`;
      i++;
      if (c === '"') break;
      if (c !== '\\') {
        value += c;
        continue;
      }
      const e = text[i++];
      if (e === 'n') value += '\n';
      else if (e === '\\' || e === '"') value += e;
      else return `label ${name}: unknown escape \\${e ?? ''}`;
    }
    if (name in labels) return `label ${name} appears twice`;
    labels[name] = value;
    skipSpace();
    if (text[i] === ',') i++;
    else if (text[i] !== '}') return `expected , or } after label ${name}`;
  }
}

/** The family a sample belongs to: histogram and summary suffixes stripped when the family is declared. */
export function familyOf(name: string, types: ReadonlyMap<string, string>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const base = name.slice(0, -suffix.length);
    if (types.has(base)) return base;
  }
  return name;
}
