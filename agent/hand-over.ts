// A run is handed over when the coordinator acknowledged its `final`, across any reconnects; only
// then may its spool go. One wait for both ways a run ends on an agent: the run it ran, and a
// restarted process's upload of a spool it found (leftover.ts).

/** Resolves true once `finalAcked` does, false if `gaveUp` resolves first (the spool is then kept). */
export function awaitFinalAck(finalAcked: Promise<void>, gaveUp: Promise<void>): Promise<boolean> {
  return Promise.race([finalAcked.then(() => true), gaveUp.then(() => false)]);
}
