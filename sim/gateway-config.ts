// The gateway's objective file (`--gateway-config FILE`): which priority band each
// `x-gateway-inference-objective` name maps to, like the InferenceObjective resources of a cluster.
import { readFileSync } from 'node:fs';
import { SimOptionsError } from './options.js';

/** Reads `{"objectives": {"premium": 100, ...}}`; the file's objectives replace the defaults. */
export function readGatewayConfig(path: string): Record<string, number> {
  const fail = (why: string): never => {
    throw new SimOptionsError([`--gateway-config ${path}: ${why}`]);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    fail((err as Error).message);
  }
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(parsed) || !isObject(parsed['objectives']) || Object.keys(parsed).some((k) => k !== 'objectives'))
    fail('expected {"objectives": {"<name>": <integer priority>, ...}} and nothing else');
  // Each priority is checked with the other options (objectives.<name>: expected an integer priority).
  return (parsed as { objectives: Record<string, number> }).objectives;
}
