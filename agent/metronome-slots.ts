// The metronome's shared control slots (an Int32Array) and its messages, named for both its sides.

/** Bumped by the loop with each new instant, so a waiting thread wakes and reads it. */
export const GENERATION = 0;
/** Set to 1 to end the thread. */
export const STOP = 1;
/** How many Int32 slots the control buffer holds. */
export const CONTROL_SLOTS = 2;

/** The thread's messages: it is up and waiting; an instant asked for has come. */
export const READY = 1;
export const TICK = 0;
