// Work that must not sit between a socket read and its timestamp. Node drains microtasks after
// every callback, so a request's bookkeeping done as it finishes (histograms, spool line, record
// batch) would delay the reads of every other socket that became readable in the same poll. Items
// are collected as they arise and handled together in the check phase (setImmediate), which the
// event loop enters only after every socket read of the current poll phase was stamped.

/** Collects items and hands them over in one batch once the current poll phase is over. */
export class AfterReads<T> {
  private items: T[] = [];
  private scheduled = false;

  constructor(private readonly handle: (items: T[]) => void) {}

  push(item: T): void {
    this.items.push(item);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.drain);
  }

  /** Hands over what is pending now (also called directly when the run ends). */
  readonly drain = (): void => {
    this.scheduled = false;
    if (this.items.length === 0) return;
    const items = this.items;
    this.items = [];
    this.handle(items);
  };
}
