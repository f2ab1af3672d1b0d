// Request bodies for classes whose requests differ (length distributions, datasets, traces): each
// body is built for its request from the shape the global schedule gives it, with the text
// shared/request-text.ts makes from the target's token-exact vocabulary (the plan as run carries
// it), so each prompt counts its planned tokens on the target without asking the server.
import type { ApiKind, Plan, TrafficClass } from '../shared/plan.js';
import { requestId } from '../shared/prompt-text.js';
import type { RequestShape } from '../shared/request-shape.js';
import { ClassRequests } from '../shared/request-shape.js';
import { RequestText } from '../shared/request-text.js';
import type { ClassSchedule } from '../shared/schedule.js';
import type { ApiAdapter } from './api/adapter.js';
import { adapterFor } from './api/index.js';

/** Builds the body of each request of one class from its own shape. */
export class WorkloadPromptBuilder {
  private readonly shapes: ClassRequests;
  private readonly text: RequestText;
  private readonly adapter: ApiAdapter;

  constructor(
    private readonly runId: string,
    plan: Plan,
    private readonly cls: TrafficClass,
    private readonly schedule: ClassSchedule,
    api: ApiKind,
    private readonly model: string,
  ) {
    // The class's own adapter shapes the body (tools, the Responses API's `input`): the text is
    // the conversation the vocabulary made exact, sent as a conversation is on that API.
    this.adapter = adapterFor(api, cls);
    this.shapes = new ClassRequests(plan, cls);
    this.text = new RequestText(plan, cls, runId);
  }

  /** The request's x-request-id. */
  requestId(requestIndex: number): string {
    return requestId(this.runId, this.cls.name, requestIndex);
  }

  /** Request `requestIndex`'s shape: from the schedule (open loop) or drawn for it (closed loop). */
  shape(requestIndex: number): RequestShape {
    const r = this.schedule.requests;
    if (!r) return this.shapes.at(requestIndex);
    return {
      inputTokens: r.inputTokens[requestIndex]!,
      outputTokens: r.outputTokens[requestIndex]!,
      ...(r.records.length > 0 && { record: r.records[requestIndex]! }),
      ...(r.hashIds.length > 0 && { hashIds: r.hashIds[requestIndex]! }),
    };
  }

  /** The JSON body of request `requestIndex`. */
  body(requestIndex: number): string {
    const shape = this.shape(requestIndex);
    // No canary: canaries are for calibrated classes of identical requests.
    const fields = { model: this.model, maxTokens: shape.outputTokens, ignoreEos: this.cls.prompt.ignore_eos ?? true };
    return this.adapter.bodyFromMessages(fields, this.text.build(requestIndex, shape).messages);
  }
}
