// Liveness of one WebSocket link, the same on both ends: ping the peer every PING_INTERVAL_MS and
// drop the link when no pong came back for LINK_SILENCE_MS. Only pongs count — they answer our own
// pings, so they prove both directions carry frames; frames the peer sends on its own would not
// (a link blackholed towards the peer still delivers them). shared/delivery.ts states the bound,
// which holds while this process's event loop is responsive: a blocked loop is not the link.
import { WebSocket } from 'ws';
import { LINK_SILENCE_MS, PING_INTERVAL_MS } from './delivery.js';
import { StallClock } from './late-tick.js';

/** Starts the heartbeat on `ws`; `onSilent` runs just before the link is dropped. Returns the stop function. */
export function heartbeat(ws: WebSocket, onSilent: () => void): () => void {
  let lastPongMs = Date.now();
  const pong = (): void => {
    lastPongMs = Date.now();
  };
  ws.on('pong', pong);
  const clock = new StallClock(PING_INTERVAL_MS);
  const timer = setInterval(() => {
    // This process's own stalls are not the link's silence: pongs that arrived meanwhile are read
    // after the timers, and the next pong needs a round trip after the stall (late-tick.ts).
    const now = clock.tick();
    if (clock.silenceMs(lastPongMs, now) > LINK_SILENCE_MS) {
      clearInterval(timer);
      onSilent();
      ws.terminate();
      return;
    }
    if (ws.readyState === WebSocket.OPEN) ws.ping();
  }, PING_INTERVAL_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    ws.off('pong', pong);
  };
}
