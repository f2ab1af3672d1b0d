// API adapters by the plan's `target.api` (or `class.api`), from the registry of API modules.
import { apiModule } from '../../shared/apis/registry.js';
import type { ApiKind, TrafficClass } from '../../shared/plan.js';
import type { ApiAdapter } from './adapter.js';

export { fillImages } from '../../shared/apis/contract.js';

/** The adapters of the APIs a class's options do not change, by plan name (the warm-up reads the chat path's base). */
export const API_ADAPTERS = { chat: apiModule('chat').adapter({ batchSize: 1 }) };

/** The adapter of a class's API (class.api, else target.api) for the class's options. */
export function adapterFor(api: ApiKind, cls: TrafficClass): ApiAdapter {
  const { tools, images, tool_choice: toolChoice, batch_size: batchSize } = cls.prompt;
  return apiModule(api).adapter({
    batchSize: batchSize ?? 1,
    ...(tools && { tools }),
    ...(toolChoice !== undefined && { toolChoice }),
    ...(images && { images: images.count }),
  });
}
