// A channel's wait on one of its agent's replies (a probe's answer, `prepared`, `armed`): fed every
// message the channel takes, with a deadline, told when the link closes, cancelled when the run is
// over; it always removes itself from the channel's set of waits.
import type { AgentMessage } from '../shared/protocol.js';

/** A reply the channel is waiting for: fed every message it takes, told when the link closes. */
export interface Wait {
  message(m: AgentMessage): void;
  closed(): void;
  cancel(): void;
}

/** How a wait settles. */
export interface Settle<T> {
  resolve(v: T): void;
  reject(e: Error): void;
}

/** Looks at each message the channel takes, and settles the wait when its reply came. */
export type WaitMessage<T> = (m: AgentMessage, done: Settle<T>) => void;

/** A wait's deadline, and what its end or the link closing does. */
export interface WaitLimits<T> {
  ms: number;
  timedOut(done: Settle<T>): void;
  closed?(done: Settle<T>): void;
}

/** Adds a wait to `waits`, calls `ask` (which sends what is to be answered), and resolves with the reply. */
export function awaitReply<T>(
  waits: Set<Wait>,
  who: string,
  onMessage: WaitMessage<T>,
  limits: WaitLimits<T>,
  ask: () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const end = (): void => {
      clearTimeout(timer);
      waits.delete(wait);
    };
    const done: Settle<T> = {
      resolve: (v: T): void => {
        end();
        resolve(v);
      },
      reject: (e: Error): void => {
        end();
        reject(e);
      },
    };
    const wait: Wait = {
      message: (m) => onMessage(m, done),
      closed: () => limits.closed?.(done),
      cancel: () => done.reject(new Error(`${who}: the run is over`)),
    };
    const timer = setTimeout(() => limits.timedOut(done), limits.ms);
    waits.add(wait);
    ask();
  });
}
