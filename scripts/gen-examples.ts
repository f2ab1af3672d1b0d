#!/usr/bin/env node
// Writes the published JSON Schemas, the example trace excerpts and datasets under examples/
// (deterministic: the same bytes on every machine). Run: npm run examples:generate
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemaFiles } from '../shared/file-schemas.js';
import { azureCsv, burstGptCsv, mooncakeJsonl, synthMooncake, synthPromptsJsonl, synthShareGpt } from './trace-synth.js';

const dir = process.argv[2] ?? 'examples';
mkdirSync(join(dir, 'traces'), { recursive: true });
mkdirSync(join(dir, 'datasets'), { recursive: true });
mkdirSync(join(dir, 'schemas'), { recursive: true });
const rows = synthMooncake({ rows: 300, seed: 1, ratePerS: 5 });
const files: Record<string, string> = {
  'traces/mooncake-excerpt.jsonl': mooncakeJsonl(rows),
  'traces/azure-excerpt.csv': azureCsv(rows),
  'traces/burstgpt-excerpt.csv': burstGptCsv(rows),
  'datasets/prompts.jsonl': synthPromptsJsonl(60, 1),
  'datasets/sharegpt-excerpt.json': synthShareGpt(20, 1),
  ...Object.fromEntries(Object.entries(schemaFiles()).map(([name, text]) => [`schemas/${name}`, text])),
};
for (const [name, text] of Object.entries(files)) {
  writeFileSync(join(dir, name), text);
  process.stdout.write(`wrote ${join(dir, name)} (${text.length} bytes)\n`);
}
