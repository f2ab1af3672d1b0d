// How a run started its embedded engine-sim, kept in its journal: a recovery starts it again with
// the same flags and environment at the same address (the plan's target), where the agents send.

/** The embedded engine-sim's flags and environment (its port is the plan's target's). */
export interface EmbeddedSim {
  args: string[];
  env: Record<string, string>;
}
