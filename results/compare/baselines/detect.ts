// Pure: which tool wrote a baseline file, told by its content (JSON, JSON lines or YAML), and the
// file read as that tool's baseline, or every problem with it.
import { parse as parseYaml } from 'yaml';
import { parseExact } from '../../../shared/json.js';
import { looksLikeAiperfAggregate, looksLikeAiperfRecords, readAiperfAggregate, readAiperfRecords } from './aiperf.js';
import { looksLikeBenchmarkReport, readBenchmarkReport } from './benchmark-report.js';
import { looksLikeGuidellm, readGuidellm } from './guidellm.js';
import type { BaselineFormat, ForeignBaseline } from './types.js';
import { BASELINE_FORMATS } from './types.js';
import { looksLikeVllm, readVllm } from './vllm.js';

/** What a file's text parses as: one document, or JSON lines. */
type Parsed = { kind: 'doc'; doc: unknown } | { kind: 'lines'; lines: unknown[] };

/** The text as JSON, else JSON lines, else YAML; null when it is none of them. */
export function parseText(text: string): Parsed | null {
  try {
    return { kind: 'doc', doc: parseExact(text) };
  } catch {
    // not one JSON document
  }
  const rows = text.split('\n').filter((l) => l.trim() !== '');
  if (rows.length > 1 && rows.every((l) => l.trimStart().startsWith('{'))) {
    try {
      return { kind: 'lines', lines: rows.map((l) => parseExact(l)) };
    } catch {
      // not JSON lines
    }
  }
  try {
    const doc = parseYaml(text);
    return doc !== null && typeof doc === 'object' ? { kind: 'doc', doc } : null;
  } catch {
    return null;
  }
}

/** The format the content shows, or null when it shows none of the four. */
export function detectFormat(p: Parsed): BaselineFormat | null {
  if (p.kind === 'lines') return looksLikeAiperfRecords(p.lines) ? 'aiperf' : looksLikeVllm(p.lines[0]) ? 'vllm' : null;
  if (looksLikeBenchmarkReport(p.doc)) return 'benchmark-report';
  if (looksLikeGuidellm(p.doc)) return 'guidellm';
  if (looksLikeVllm(p.doc)) return 'vllm';
  if (looksLikeAiperfAggregate(p.doc) || looksLikeAiperfRecords(p.doc)) return 'aiperf';
  return null;
}

export interface ReadOptions {
  /** --baseline-format: read as this tool's format, whatever the content suggests. */
  format?: string | undefined;
  /** --baseline-benchmark: which benchmark of a file that holds several (a GuideLLM report; vLLM --append-result). */
  benchmark?: number | undefined;
}

/** A baseline file's text as a tool's baseline, or the problems (each with its JSON path). */
export function readBaselineText(text: string, o: ReadOptions = {}): ForeignBaseline | { problems: string[] } {
  if (o.format !== undefined && !(BASELINE_FORMATS as readonly string[]).includes(o.format))
    return { problems: [`--baseline-format ${o.format}: expected one of ${BASELINE_FORMATS.join(', ')}`] };
  const parsed = parseText(text);
  if (!parsed) return { problems: ['$: neither JSON, JSON lines nor YAML'] };
  const format = (o.format as BaselineFormat | undefined) ?? detectFormat(parsed);
  if (!format)
    return {
      problems: [
        "$: not a baseline loadfleet reads: expected a vLLM bench serve result (backend, completed, median_ttft_ms or ttfts), a GuideLLM report (benchmarks[].metrics), an AIPerf export (profile_export.jsonl records, or profile_export_aiperf.json's metrics with unit and avg) or an llm-d Benchmark Report (version 0.2.x, run, results); name the tool with --baseline-format if its file is unusual",
      ],
    };
  const wrongShape = (what: string) => ({ problems: [`$: read as ${format} (--baseline-format), but ${what}`] });
  if (format === 'aiperf') {
    if (parsed.kind === 'lines') return readAiperfRecords(parsed.lines);
    if (Array.isArray(parsed.doc)) return readAiperfRecords(parsed.doc);
    return isRecord(parsed.doc) ? readAiperfAggregate(parsed.doc) : wrongShape('the file is not an object');
  }
  // vLLM's --append-result adds one result per line: one of them is the baseline.
  if (format === 'vllm' && parsed.kind === 'lines') {
    const n = parsed.lines.length;
    if (o.benchmark === undefined)
      return { problems: [`$: ${n} vLLM results, one per line (--append-result); choose one with --baseline-benchmark N (0–${n - 1})`] };
    const one = parsed.lines[o.benchmark];
    if (!isRecord(one)) return { problems: [`$[${o.benchmark}]: no such result (0–${n - 1})`] };
    return readVllm(one);
  }
  if (parsed.kind === 'lines' || !isRecord(parsed.doc)) return wrongShape('the file is not one JSON or YAML object');
  if (format === 'vllm') return readVllm(parsed.doc);
  if (format === 'guidellm') {
    if (!Array.isArray(parsed.doc.benchmarks) || parsed.doc.benchmarks.length === 0)
      return { problems: ['$.benchmarks: missing or empty (expected a list of benchmarks)'] };
    return readGuidellm(parsed.doc, o.benchmark);
  }
  return readBenchmarkReport(parsed.doc);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}
