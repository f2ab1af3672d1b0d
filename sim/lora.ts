// LoRA adapters on engine-sim, as vLLM serves them: up to max_loras adapters are loaded at once;
// a request for a loaded adapter goes straight to the engine, one for an unloaded adapter first
// loads it (lora_load_ms, evicting the least recently used idle adapter when the slots are full),
// and when every slot holds an adapter with requests in flight it waits until one goes idle. The
// state is exposed as vLLM's `vllm:lora_requests_info` gauge (running and waiting adapter names,
// max_lora) plus engine-sim's own load and eviction counters. One table for the server.
import type { MetricFamily } from './metrics.js';
import { family } from './metrics.js';

interface Slot {
  /** Requests of this adapter in flight (loading included). */
  active: number;
  loading: boolean;
  /** Requests waiting for the load to finish. */
  pending: (() => void)[];
  lastUsedMs: number;
}

/** The adapter table of one server. */
export class LoraSlots {
  private readonly loaded = new Map<string, Slot>();
  private readonly waiting: { name: string; start: () => void }[] = [];
  readonly loads = new Map<string, number>();
  evictions = 0;

  constructor(
    readonly names: readonly string[],
    private readonly maxLoras: number,
    private readonly loadMs: number,
    private readonly model: string,
  ) {
    for (const n of names) this.loads.set(n, 0);
  }

  /** Whether `model` names one of the adapters. */
  has(model: string): boolean {
    return this.loads.has(model);
  }

  /** Runs `start` once adapter `name` is loaded and holds it until `release` (returned) is called. */
  acquire(name: string, start: () => void): () => void {
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.release(name);
    };
    this.admit(name, start);
    return release;
  }

  private admit(name: string, start: () => void): void {
    const slot = this.loaded.get(name);
    if (slot) {
      slot.active++;
      slot.lastUsedMs = Date.now();
      if (slot.loading) slot.pending.push(start);
      else start();
      return;
    }
    if (this.loaded.size >= this.maxLoras && !this.evictIdle()) {
      this.waiting.push({ name, start });
      return;
    }
    const fresh: Slot = { active: 1, loading: true, pending: [start], lastUsedMs: Date.now() };
    this.loaded.set(name, fresh);
    this.loads.set(name, (this.loads.get(name) ?? 0) + 1);
    setTimeout(() => {
      fresh.loading = false;
      for (const go of fresh.pending.splice(0)) go();
    }, this.loadMs);
  }

  private release(name: string): void {
    const slot = this.loaded.get(name);
    if (!slot) return;
    slot.active--;
    slot.lastUsedMs = Date.now();
    if (slot.active > 0) return;
    // An idle adapter stays loaded (a later request skips the load) until a waiting one needs its slot.
    const queued = this.waiting.splice(0);
    for (const w of queued) this.admit(w.name, w.start);
  }

  // Frees the slot of the least recently used adapter with nothing in flight; false if none is idle.
  private evictIdle(): boolean {
    let victim: string | undefined;
    let oldest = Number.POSITIVE_INFINITY;
    for (const [n, s] of this.loaded)
      if (s.active === 0 && !s.loading && s.lastUsedMs < oldest) {
        victim = n;
        oldest = s.lastUsedMs;
      }
    if (victim === undefined) return false;
    this.loaded.delete(victim);
    this.evictions++;
    return true;
  }

  /** vLLM's LoRA state gauge and engine-sim's load and eviction counters. */
  families(): MetricFamily[] {
    const running = [...this.loaded].filter(([, s]) => s.active > 0).map(([n]) => n);
    const waiting = [...new Set(this.waiting.map((w) => w.name))];
    const m = `model_name="${this.model}"`;
    return [
      family('vllm:lora_requests_info', 'gauge', 'Running stats on lora requests.', [
        `vllm:lora_requests_info{${m},max_lora="${this.maxLoras}",running_lora_adapters="${running.join(',')}",waiting_lora_adapters="${waiting.join(',')}"} ${Date.now() / 1000}`,
      ]),
      family(
        'loadfleet_sim_lora_loads_total',
        'counter',
        'Adapter loads (each costs --lora-load-ms before its request reaches the engine).',
        [...this.loads].map(([n, v]) => `loadfleet_sim_lora_loads_total{${m},lora_name="${n}"} ${v}`),
      ),
      family('loadfleet_sim_lora_evictions_total', 'counter', 'Idle adapters unloaded to make room (max_loras reached).', [
        `loadfleet_sim_lora_evictions_total{${m}} ${this.evictions}`,
      ]),
    ];
  }
}
