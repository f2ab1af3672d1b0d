// Measures the agents' clocks against the coordinator's at join: NTP-style four-timestamp probes
// (channel.ts sends them, one after another so no probe queues behind another), agents probed one
// at a time (a few at a time in fleets of hundreds or more: probeLanes) so the coordinator's own
// event loop (which stamps T4) is as idle as it gets.
import type { Clock, OffsetEstimate } from '../shared/clock.js';

/** Probes per agent at join; the lowest-delay quarter is kept. */
export const PROBES_AT_JOIN = 32;

/** Agents per concurrently probed agent at join: up to this many, one agent at a time. */
export const AGENTS_PER_PROBE_LANE = 64;
/** The most agents probed at once (a large fleet). */
export const MAX_PROBE_LANES = 128;

/**
 * How many agents are probed at once: one for fleets of up to AGENTS_PER_PROBE_LANE agents, then
 * one more per as many again, at most MAX_PROBE_LANES. One at a time, 32 probes each, a fleet of
 * 10,000 agents took longer than the join timeout (the synthetic-fleet bench); a few at a time
 * keep the event loop that stamps T4 nearly idle, and each agent's offset_uncertainty_ns (half its
 * kept round trip) shows what the sharing cost.
 */
export function probeLanes(agents: number): number {
  return Math.min(MAX_PROBE_LANES, Math.max(1, Math.ceil(agents / AGENTS_PER_PROBE_LANE)));
}

/** What probeAll probes: an agent's channel (channel.ts). */
export interface JoinProbed {
  probeAtJoin(clock: Clock, count: number): Promise<OffsetEstimate>;
}

/** Probes every agent through its channel, probeLanes(n) agents at a time (each agent's probes one after another). */
export async function probeAll(channels: readonly JoinProbed[], clock: Clock): Promise<OffsetEstimate[]> {
  const out = new Array<OffsetEstimate>(channels.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < channels.length) {
      const i = next++;
      out[i] = await channels[i]!.probeAtJoin(clock, PROBES_AT_JOIN);
    }
  };
  await Promise.all(Array.from({ length: probeLanes(channels.length) }, lane));
  return out;
}
