// Pure: which clock a span was stamped on. Servers behind one service.name are several clocks (the
// replicas of a deployment, a disaggregated deployment's prefill and decode pools under one name),
// so a span's clock is its server instance: OpenTelemetry's service.instance.id, else host.name,
// else only its service.name, which the run then says it could not tell apart.
import type { OtlpAttributes } from './span.js';

/** What tells one server clock from another. */
export type ClockKeyedBy = 'service.instance.id' | 'host.name' | 'service.name';

/** A span's clock: its key in run.json `server_spans.clocks` and what the key was made of. */
export interface ClockIdentity {
  key: string;
  service: string;
  instance: string | null;
  keyedBy: ClockKeyedBy;
}

/** What run.json says of a clock keyed by service.name alone. */
export const SERVICE_NAME_CAVEAT =
  'keyed by service.name alone (the spans carry neither service.instance.id nor host.name): several server instances under this name would be fitted as one clock, and their bounds could cross or widen its uncertainty';

const text = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/** The clock of a span from its service name and instance attributes (as spans.ndjson keeps them). */
export function clockIdentity(service: string, instance: string | null, instanceFrom: string | null): ClockIdentity {
  const name = service || '(no service.name)';
  if (instance !== null && (instanceFrom === 'service.instance.id' || instanceFrom === 'host.name'))
    return { key: `${name}@${instance}`, service, instance, keyedBy: instanceFrom };
  return { key: name, service, instance: null, keyedBy: 'service.name' };
}

/** The instance attribute a span's resource names, and which one it is. */
export function resourceInstance(resource: OtlpAttributes): { instance: string | null; from: ClockKeyedBy | null } {
  const id = text(resource['service.instance.id']);
  if (id !== null) return { instance: id, from: 'service.instance.id' };
  const host = text(resource['host.name']);
  if (host !== null) return { instance: host, from: 'host.name' };
  return { instance: null, from: null };
}
