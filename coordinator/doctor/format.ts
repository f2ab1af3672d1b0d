// Pure: the doctor's report as lines for a terminal — the verdict first, then one line per thing
// checked, then what loadfleet will do differently and what blocks a run.
import type { ApiReport, DoctorReport } from './classify.js';

/** The report as text lines. */
export function formatReport(r: DoctorReport): string[] {
  const verdict = r.loadable
    ? r.verdict
    : `cannot be loaded (${r.problems.length === 1 ? 'the problem below' : `${r.problems.length} problems below`})`;
  const lines = [
    `loadfleet doctor ${r.base_url} (${r.requests_made} request${r.requests_made === 1 ? '' : 's'})`,
    `  verdict:     ${verdict}`,
  ];
  const row = (label: string, text: string) => lines.push(`  ${`${label}:`.padEnd(12)} ${text}`);
  row(
    'models',
    r.problems.includes(r.models.detail)
      ? 'not read (see problems)'
      : r.models.detail + (r.models.max_model_len ? ` (context ${r.models.max_model_len} tokens)` : ''),
  );
  row('auth', r.auth.api_key_env ? `key from $${r.auth.api_key_env}${r.auth.key_set ? '' : ' (not set here)'}` : 'no key sent');
  for (const api of Object.keys(r.apis)) {
    const a = r.apis[api];
    if (a) row(api, apiLine(a));
  }
  const used = r.preferred_api ? r.apis[r.preferred_api] : null;
  if (used)
    row(
      'reasoning',
      used.reasoning_fields.length > 0
        ? `streamed as delta.${used.reasoning_fields.join(', delta.')} (${used.reasoning_chunks} events)`
        : `none in a short answer (a model that does not reason, or reasoning off); loadfleet reads reasoning_content and reasoning`,
    );
  if (r.tokenize)
    row(
      'tokenize',
      r.tokenize.dialect
        ? `${r.tokenize.dialect} dialect — the probe prompt counts ${r.tokenize.probe_tokens ?? '?'} tokens; prompt lengths will be exact on the server's tokenizer (server-tokenize)`
        : `none — ${r.tokenize.detail}`,
    );
  for (const m of r.metrics) row('metrics', `${m.url}: ${m.detail}`);
  if (r.notes.length > 0) lines.push('notes:', ...r.notes.map((n) => `  - ${n}`));
  if (r.problems.length > 0) lines.push('problems:', ...r.problems.map((p) => `  - ${p}`));
  return lines;
}

function apiLine(a: ApiReport): string {
  if (!a.streams) return a.detail;
  const usage = a.usage === 'streamed' ? 'usage streamed (stream_options.include_usage)' : 'no usage';
  const eos = a.ignore_eos === 'refused' ? '; ignore_eos refused' : '';
  return `${a.detail}; ${usage}${eos}; first byte after ${a.first_byte_ms} ms`;
}
