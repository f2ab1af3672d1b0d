// An agent's run timeline (pure): its raw clock slewed back by a correction that grows at the
// rate the coordinator last told it (coordinator/clock/slew.ts), so a drifting oscillator still
// follows the coordinator's timeline and no stamp ever steps (an in-flight request's stamps stay
// consistent). The correction is piecewise linear in raw time, one segment per rate; it is kept
// per request (requests.ndjson clock_correction_ns) so the raw clock readings stay recoverable.

/** The fastest an agent slews its run timeline (5 ms per second): far beyond any oscillator's drift. */
export const MAX_SLEW_PPM = 5000;

/** Raw ns (since the start instant) → run-timeline ns, and the correction between them. */
export class SlewTimeline {
  /** Where the current segment starts: raw instant and the correction there. */
  private baseRawNs = 0;
  private baseCorrNs = 0;
  /** The current segment's rate as a fraction (ppm × 1e-6). */
  private rate = 0;

  /** The run-timeline instant of raw instant `rawNs`. */
  at(rawNs: number): number {
    return rawNs - this.correctionAtRaw(rawNs);
  }

  /** The correction (ns the run timeline is behind the raw clock) at raw instant `rawNs` of the current segment. */
  correctionAtRaw(rawNs: number): number {
    return this.baseCorrNs + (rawNs - this.baseRawNs) * this.rate;
  }

  /**
   * The correction at run-timeline instant `tNs`: exact for an instant since the last rate change
   * (the current segment is inverted); an earlier one takes the value at the change. A record's
   * stamps are read back within one after-reads delay of being taken, so that only ever misses by
   * the rate change times that delay.
   */
  correctionAt(tNs: number): number {
    if (tNs <= this.baseRawNs - this.baseCorrNs) return this.baseCorrNs;
    const raw = (tNs + this.baseCorrNs - this.baseRawNs * this.rate) / (1 - this.rate);
    return this.correctionAtRaw(raw);
  }

  /** From raw instant `rawNs` on, slews at `ratePpm` (capped); the correction is continuous there. */
  slew(rawNs: number, ratePpm: number): void {
    if (!Number.isFinite(ratePpm)) return;
    this.baseCorrNs = this.correctionAtRaw(rawNs);
    this.baseRawNs = rawNs;
    this.rate = Math.max(-MAX_SLEW_PPM, Math.min(MAX_SLEW_PPM, ratePpm)) * 1e-6;
  }
}
