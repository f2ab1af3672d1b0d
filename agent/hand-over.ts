// A run is handed over when the coordinator acknowledged its `final`, across any reconnects; only
// then may its spool go. One wait for both ways a run ends on an agent: the run it ran, and a
// restarted process's upload of a spool it found (leftover.ts).

/**
 * Resolves true once `finalAcked` does, false if `gaveUp` resolves first or `finalAcked` rejects
 * (the outbox moved on to another run without the ack: Outbox.reset); the spool is then kept.
 * `onUnacked` hears why in the last case.
 */
export function awaitFinalAck(finalAcked: Promise<void>, gaveUp: Promise<void>, onUnacked?: (err: Error) => void): Promise<boolean> {
  return Promise.race([
    finalAcked.then(
      () => true,
      (err: Error) => {
        onUnacked?.(err);
        return false;
      },
    ),
    gaveUp.then(() => false),
  ]);
}
