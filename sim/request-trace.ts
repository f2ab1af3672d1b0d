// The glue between one HTTP request and its spans: reads its traceparent and request id, hands the
// engine a JobTrace to note the journey in, and once the response is over passes the finished
// request to the span sink. Nothing here runs unless spans are being sent.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GenerationRequest, ResponseIdentity } from './apis/contract.js';
import { realClock } from './clock.js';
import { outputLength } from './generate.js';
import type { JobTrace } from './job.js';
import { parseTraceparent } from './journey.js';
import type { SpanSink } from './tracing.js';

/** Starts tracing one request handed to a replica now; returns the trace its engine job carries. */
export function traceRequest(
  sink: SpanSink,
  req: IncomingMessage,
  res: ServerResponse,
  request: GenerationRequest,
  who: ResponseIdentity,
): JobTrace {
  const trace: JobTrace = { journey: [] };
  const arrivalS = realClock.nowS();
  const header = req.headers['x-request-id'];
  const traceparent = req.headers['traceparent'];
  const completionTokens = outputLength(request);
  // After the last byte (or the client leaving): a request the engine did not finish has no span, as in vLLM.
  res.once('close', () => {
    if (!trace.journey.some((e) => e.type === 'FINISHED')) return;
    sink.emit({
      parent: parseTraceparent(typeof traceparent === 'string' ? traceparent : undefined),
      requestId: typeof header === 'string' && header !== '' ? header : who.id,
      responseId: who.id,
      model: who.model,
      promptTokens: request.promptTokens,
      completionTokens,
      maxTokens: request.maxTokens,
      finishReason: completionTokens === request.maxTokens ? 'length' : 'stop',
      arrivalS,
      trace,
    });
  });
  return trace;
}
