// The port the NetworkPolicy allows to the target. Calico, Cilium and the VPC CNI judge egress
// after a Service's DNAT, on the pod's port (vLLM's 8000, KServe's 8080), not the Service's (80)
// that the plan's URL names: so the port is the Service's `targetPort`, read from the cluster, and
// a named one from its EndpointSlices. Without --target-port and without a Service to read, a
// --target-selector is refused with the reason rather than rendered with a port that times out.
import { UsageError } from './options.mjs';

const portOf = (u) => Number(u.port) || (u.protocol === 'https:' ? 443 : 80);

/** The Service a URL's host names ({ name, namespace }), or undefined when it is not one (an IP, an outside name). */
export function serviceOf(url, defaultNamespace) {
  const host = url.hostname;
  if (/^[\d.]+$/.test(host) || host.includes(':')) return undefined;
  const parts = host.split('.');
  if (parts.length === 1) return { name: parts[0], namespace: defaultNamespace };
  if (parts.length === 2 || parts[2] === 'svc') return { name: parts[0], namespace: parts[1] };
  return undefined;
}

/**
 * The pod ports behind `port` of a Service (`kubectl get service -o json`), with its EndpointSlices
 * for a named targetPort: { ports } or { problem }.
 */
export function podPorts(service, slices, port) {
  const entry = (service?.spec?.ports ?? []).find((p) => p.port === port);
  const name = `${service?.metadata?.namespace ?? ''}/${service?.metadata?.name ?? ''}`;
  if (!entry) return { problem: `Service ${name} has no port ${port}` };
  const target = entry.targetPort ?? port;
  if (typeof target === 'number') return { ports: [target] };
  if (/^\d+$/.test(target)) return { ports: [Number(target)] };
  const ports = [
    ...new Set((slices ?? []).flatMap((s) => (s.ports ?? []).filter((p) => (p.name ?? '') === (entry.name ?? '')).map((p) => p.port))),
  ].filter((p) => typeof p === 'number');
  if (ports.length === 0)
    return { problem: `Service ${name} port ${port} targets the named port '${target}', which no EndpointSlice resolves yet` };
  return { ports };
}

/** Reads the Service (and its EndpointSlices) a URL names: { ports } or { problem }. */
function lookUp(kIn, url, namespace) {
  const svc = serviceOf(url, namespace);
  if (!svc) return { problem: `${url.hostname} is not an in-cluster Service name` };
  const k = kIn(svc.namespace);
  const service = k.json(['get', 'service', svc.name, '--request-timeout=10s']);
  if (!service) return { problem: `Service ${svc.namespace}/${svc.name} could not be read` };
  const port = portOf(url);
  const named = (service.spec?.ports ?? []).find((p) => p.port === port && typeof p.targetPort === 'string' && !/^\d+$/.test(p.targetPort));
  const slices = named
    ? (k.json(['get', 'endpointslices', '-l', `kubernetes.io/service-name=${svc.name}`, '--request-timeout=10s'])?.items ?? [])
    : [];
  return podPorts(service, slices, port);
}

/**
 * The ports the target policy allows (`k(namespace)` is a kubectl for that namespace): --target-port
 * as given; else the pods' ports behind the plan's URL and scrape URLs. A --target-selector whose port cannot be read is refused; for a
 * --target-cidr alone (a server outside the cluster) the URL's port stands. Returns { ports, notes }.
 */
export function policyPorts(k, o, inputs) {
  const notes = [];
  const scrape = (inputs.scrapeUrls ?? []).map((u) => {
    const r = lookUp(k, u, o.namespace);
    return r.ports ?? [portOf(u)];
  });
  if (o.targetPort.length > 0) return { ports: [...new Set([...o.targetPort, ...scrape.flat()])], notes };
  const r = lookUp(k, inputs.target, o.namespace);
  if (r.ports) {
    if (r.ports.join() !== String(portOf(inputs.target)))
      notes.push(
        `the target policy allows port ${r.ports.join(', ')}: the pods' port behind ${inputs.target.host} (NetworkPolicy is judged after the Service's DNAT)`,
      );
    return { ports: [...new Set([...r.ports, ...scrape.flat()])], notes };
  }
  if (Object.keys(o.targetSelector).length > 0)
    throw new UsageError(
      `--target-selector without --target-port: the policy must allow the server pods' port (after the Service's DNAT), and ${r.problem}; give --target-port (e.g. vLLM 8000, SGLang 30000, KServe 8080)`,
    );
  return { ports: [...new Set([portOf(inputs.target), ...scrape.flat()])], notes };
}
