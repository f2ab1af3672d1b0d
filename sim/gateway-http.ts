// The HTTP side of flow control: reads the objective and fairness headers, asks the gateway for
// admission, answers a drop with 429, and hands the slot back when the response is over.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Gateway } from './gateway.js';
import { sendError } from './http.js';
import { ApiError } from './openai.js';

/** Fairness id of requests that carry none. */
export const DEFAULT_FAIRNESS_ID = 'default';

/** A request's objective and fairness id, from the Gateway API or the llm-d header names (lower-case keys). */
export function flowHeaders(headers: IncomingHttpHeaders): { objective: string | undefined; fairnessId: string } {
  const first = (...names: string[]): string | undefined => {
    for (const name of names) {
      const value = headers[name];
      if (typeof value === 'string' && value.trim() !== '') return value.trim();
    }
    return undefined;
  };
  return {
    objective: first('x-gateway-inference-objective', 'x-llm-d-inference-objective'),
    fairnessId: first('x-gateway-inference-fairness-id', 'x-llm-d-inference-fairness-id') ?? DEFAULT_FAIRNESS_ID,
  };
}

/** Runs `serve` once the gateway admits the request; a drop is answered with 429 and Retry-After. */
export function admit(
  gateway: Gateway,
  res: ServerResponse,
  flow: { fairnessId: string; priority: number; bytes: number },
  serve: () => void,
): void {
  const ticket = gateway.submit({
    ...flow,
    dispatch: serve,
    reject: (reason) => {
      const message =
        reason === 'rejected-ttl-expired'
          ? 'Request dropped: it waited past the queue timeout'
          : 'Request dropped: the flow-control queue is full';
      sendError(res, new ApiError(429, message, 'rate_limit_error', reason), {
        'retry-after': '1',
        'x-llm-d-request-dropped-reason': reason,
      });
    },
  });
  // Closes after the last byte or when the client leaves: either way the slot (or queue place) goes.
  res.on('close', () => gateway.done(ticket));
}
