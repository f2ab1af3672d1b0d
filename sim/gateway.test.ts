import { describe, expect, it } from 'vitest';
import { VirtualClock } from './clock.js';
import { type FlowTicket, Gateway } from './gateway.js';
import { GatewayMetrics } from './gateway-metrics.js';
import { renderFamilies } from './metrics.js';
import { parsePrometheus } from './testkit.js';

function gateway(limits: Partial<ConstructorParameters<typeof Gateway>[0]> = {}) {
  const clock = new VirtualClock();
  const metrics = new GatewayMetrics('pool');
  const gw = new Gateway({ maxConcurrency: 1, headroom: 0, queueTimeoutS: 10, queueCapacity: 100, ...limits }, clock, metrics);
  const dispatched: string[] = [];
  const rejected: string[] = [];
  const tickets = new Map<string, FlowTicket>();
  const submit = (name: string, fairnessId: string, priority: number) => {
    tickets.set(
      name,
      gw.submit({
        fairnessId,
        priority,
        bytes: 10,
        dispatch: () => dispatched.push(name),
        reject: (reason) => rejected.push(`${name}:${reason}`),
      }),
    );
  };
  // Finishes whatever was dispatched last, freeing its slot.
  const finishLast = () => gw.done(tickets.get(dispatched.at(-1)!)!);
  return { clock, metrics, gw, dispatched, rejected, tickets, submit, finishLast };
}

describe('gateway flow control', () => {
  it('admits up to max_concurrency·(1 + headroom), then queues; saturation counts in-flight over max_concurrency', () => {
    const g = gateway({ maxConcurrency: 10, headroom: 0.2 });
    for (let i = 0; i < 14; i++) g.submit(`r${i}`, 'a', 0);
    expect(g.dispatched).toHaveLength(12);
    expect(g.gw.queuedCount).toBe(2);
    expect(g.gw.saturation).toBeCloseTo(1.2, 12);
  });

  it('dispatches strictly by priority band under saturation', () => {
    const g = gateway();
    g.submit('running', 't', 0);
    g.submit('batch1', 'b', -10);
    g.submit('std1', 's', 0);
    g.submit('premium1', 'p', 100);
    g.submit('batch2', 'b', -10);
    g.submit('premium2', 'p', 100);
    for (let i = 0; i < 5; i++) g.finishLast();
    expect(g.dispatched).toEqual(['running', 'premium1', 'premium2', 'std1', 'batch1', 'batch2']);
  });

  it('round-robins across fairness ids within a band, FIFO within each', () => {
    const g = gateway();
    g.submit('running', 'x', 0);
    for (const name of ['a1', 'a2', 'a3', 'b1', 'b2', 'c1']) g.submit(name, name[0]!, 0);
    for (let i = 0; i < 6; i++) g.finishLast();
    expect(g.dispatched).toEqual(['running', 'a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('drops a request that waits past the queue timeout, and one that finds the queue full', () => {
    const g = gateway({ queueTimeoutS: 2, queueCapacity: 1 });
    g.submit('running', 'a', 0);
    g.submit('queued', 'a', 0);
    g.submit('overflow', 'a', 0);
    expect(g.rejected).toEqual(['overflow:rejected-saturated']);
    g.clock.run(1.999);
    expect(g.rejected).toHaveLength(1);
    g.clock.run(2);
    expect(g.rejected).toEqual(['overflow:rejected-saturated', 'queued:rejected-ttl-expired']);
    g.finishLast();
    expect(g.dispatched).toEqual(['running']);
  });

  it('forgets a queued request whose client leaves, and reports every outcome in /metrics', () => {
    const g = gateway({ queueTimeoutS: 2, queueCapacity: 2 });
    g.submit('running', 'rt', 100);
    g.submit('gone', 'bt', -10);
    g.submit('late', 'bt', -10);
    g.submit('full', 'bt', -10);
    g.clock.run(1);
    g.gw.done(g.tickets.get('gone')!);
    g.clock.run(1.5);
    let m = parsePrometheus(renderFamilies(g.metrics.families({ saturation: g.gw.saturation })));
    const bt = 'fairness_id="bt",priority="-10",inference_pool="pool"';
    expect(m.get(`llm_d_epp_flow_control_queue_size{${bt}}`)).toBe(1);
    expect(m.get(`llm_d_epp_flow_control_queue_bytes{${bt}}`)).toBe(10);
    expect(m.get('llm_d_epp_flow_control_pool_saturation{inference_pool="pool"}')).toBe(1);
    g.clock.run(3);
    m = parsePrometheus(renderFamilies(g.metrics.families({ saturation: g.gw.saturation })));
    const count = (labels: string, outcome: string) =>
      m.get(`llm_d_epp_flow_control_request_queue_duration_seconds_count{${labels},outcome="${outcome}"}`);
    expect(count('fairness_id="rt",priority="100",inference_pool="pool"', 'Dispatched')).toBe(1);
    expect(count(bt, 'EvictedContextCancelled')).toBe(1);
    expect(count(bt, 'EvictedTTL')).toBe(1);
    expect(count(bt, 'RejectedCapacity')).toBe(1);
    expect(m.get(`llm_d_epp_flow_control_request_queue_duration_seconds_sum{${bt},outcome="EvictedTTL"}`)).toBeCloseTo(2, 9);
    expect(m.get(`llm_d_epp_flow_control_queue_size{${bt}}`)).toBe(0);
  });
});
