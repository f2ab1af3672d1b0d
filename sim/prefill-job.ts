// The engine job of a pooling request (embeddings, rerank): its whole prefill, then one step, on
// the same engines and scheduler as generation (apis/openai-embeddings.ts and apis/rerank.ts say
// what each charges).
import type { EngineJob, SimEngine } from './job.js';

/** The engine job of one pooling request: its whole prefill, then one step; `done` answers. */
export function embeddingsJob(request: { promptTokens: number }, priority: number, done: () => void): EngineJob {
  return {
    promptTokens: request.promptTokens,
    outputTokens: 1,
    finishReason: 'stop',
    priority,
    onToken: () => {},
    onFinish: done,
  };
}

/** Submits the job and answers when it is done; a client that leaves frees its slot. */
export function servePooling(
  engine: SimEngine,
  request: { promptTokens: number },
  priority: number,
  answer: () => void,
  onClose: (cb: () => void) => void,
): void {
  let settled = false;
  const ticket = engine.submit(
    embeddingsJob(request, priority, () => {
      settled = true;
      answer();
    }),
  );
  onClose(() => {
    if (!settled) engine.cancel(ticket, 'client_disconnect');
  });
}
