// The V8 flags every agent process is started with (local agents, the self-test a dry run
// spawns, deploy/bin/loadfleet agent). They are command-line flags because V8 sizes its heap when
// the process starts; setting them later from JavaScript changes nothing.
//
// --max-semi-space-size (MiB): V8 grows its young generation, by default up to 16 MiB per
// semi-space, when much of what it allocates survives, as it does while thousands of streams
// open. That growth stays resident: at 10,000 held streams it was ~3 KiB of each stream's
// measured RSS, though it is a constant, not a cost per stream. Capped at 4 MiB, a process
// holding 10,000 streams used 3–4 KiB less RSS a stream, and the agent's chunks per CPU-second
// with the cap were no lower than before it (docs/performance.md).
export const AGENT_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];
