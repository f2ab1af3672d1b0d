// A small, strict reader of the Prometheus text format (0.0.4) for the tests: it rejects any line
// that is not HELP, TYPE or a well-formed sample of a declared family, and checks histogram
// invariants (ascending `le`, cumulative counts, `+Inf` bucket equal to `_count`).

/** One parsed sample. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed exposition. */
export interface PromText {
  help: Map<string, string>;
  types: Map<string, string>;
  samples: PromSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;

/** Parses `text`; throws naming the first offending line. */
export function parsePrometheus(text: string): PromText {
  const out: PromText = { help: new Map(), types: new Map(), samples: [] };
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('exposition does not end with a newline');
  text.split('\n').forEach((line, i) => {
    if (line === '') return;
    const fail = (why: string): never => {
      throw new Error(`line ${i + 1}: ${why}: ${line}`);
    };
    if (line.startsWith('# HELP ') || line.startsWith('# TYPE ')) {
      const [, kind, name, rest] = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line) ?? fail('bad comment');
      if (!NAME.test(name!)) fail('bad metric name');
      if (kind === 'TYPE' && !['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest!)) fail('bad type');
      const map = kind === 'HELP' ? out.help : out.types;
      if (map.has(name!)) fail(`second ${kind}`);
      map.set(name!, rest!);
      return;
    }
    const m = SAMPLE.exec(line) ?? fail('not a sample');
    const labels: Record<string, string> = {};
    if (m[2]) {
      LABEL.lastIndex = 0;
      while (LABEL.lastIndex < m[2].length) {
        const l = LABEL.exec(m[2]) ?? fail('bad labels');
        labels[l[1]!] = l[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
      }
    }
    const value = m[3] === '+Inf' ? Number.POSITIVE_INFINITY : m[3] === '-Inf' ? Number.NEGATIVE_INFINITY : Number(m[3]);
    if (Number.isNaN(value) && m[3] !== 'NaN') fail('bad value');
    const family = familyOf(m[1]!, out.types);
    if (family === undefined) fail('sample of an undeclared family');
    out.samples.push({ name: m[1]!, labels, value });
  });
  checkHistograms(out);
  return out;
}

function familyOf(sample: string, types: Map<string, string>): string | undefined {
  if (types.has(sample)) return types.get(sample) === 'histogram' ? undefined : sample;
  const base = sample.replace(/_(bucket|sum|count)$/, '');
  return types.get(base) === 'histogram' ? base : undefined;
}

function checkHistograms(p: PromText): void {
  for (const [name, type] of p.types) {
    if (type !== 'histogram') continue;
    const series = new Map<string, { le: number; count: number }[]>();
    for (const s of p.samples.filter((x) => x.name === `${name}_bucket`)) {
      const { le, ...rest } = s.labels;
      if (le === undefined) throw new Error(`${name}_bucket without le`);
      const key = JSON.stringify(rest);
      const list = series.get(key) ?? [];
      list.push({ le: le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), count: s.value });
      series.set(key, list);
    }
    for (const [key, buckets] of series) {
      for (let i = 1; i < buckets.length; i++) {
        if (!(buckets[i]!.le > buckets[i - 1]!.le)) throw new Error(`${name}${key}: le not ascending`);
        if (buckets[i]!.count < buckets[i - 1]!.count) throw new Error(`${name}${key}: bucket counts not cumulative`);
      }
      const inf = buckets.at(-1);
      if (inf?.le !== Number.POSITIVE_INFINITY) throw new Error(`${name}${key}: no +Inf bucket`);
      const count = p.samples.find((s) => s.name === `${name}_count` && JSON.stringify(s.labels) === key);
      const sum = p.samples.find((s) => s.name === `${name}_sum` && JSON.stringify(s.labels) === key);
      if (!count || !sum) throw new Error(`${name}${key}: _count or _sum missing`);
      if (count.value !== inf.count) throw new Error(`${name}${key}: +Inf bucket ${inf.count} != _count ${count.value}`);
    }
  }
}

/** The value of the one sample `name` whose labels include `labels`; undefined when none. */
export function sampleValue(p: PromText, name: string, labels: Record<string, string> = {}): number | undefined {
  const hits = p.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (hits.length > 1) throw new Error(`${hits.length} samples match ${name} ${JSON.stringify(labels)}`);
  return hits[0]?.value;
}
