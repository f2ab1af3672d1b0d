// Calibration profiles: how long one engine step takes on a given GPU and model, and how much KV
// cache that GPU holds. A step costs a fixed overhead, plus a cost per decoding sequence, per
// prefilled token and per prefill attention pair (see PROFILE.md for the fit).

/** Step costs and KV capacity of one hardware + model pair. */
export interface EngineProfile {
  /** Fixed cost of every step: scheduling, kernel launches, sampling. */
  stepOverheadS: number;
  /** Cost per sequence that decodes one token in the step. */
  perDecodeSeqS: number;
  /** Cost per prompt token prefilled in the step. */
  perPrefillTokenS: number;
  /** Cost per (prefill token × context token it attends to): prefill attention grows with the context. */
  perPrefillPairS: number;
  /** KV cache capacity in tokens when `--kv-cache-tokens` is not given. */
  kvCacheTokens: number;
}

/** What one step does, which is all its duration depends on. */
export interface StepShape {
  /** Sequences decoding one token. */
  decodeSeqs: number;
  /** Prompt (or recompute) tokens prefilled, over every chunk in the step. */
  prefillTokens: number;
  /** Σ over prefill chunks of chunk tokens × the mean context they attend to (causal: computed + chunk/2). */
  prefillPairs: number;
}

/** The built-in profiles by name; the first is the default. */
export const PROFILES: Readonly<Record<string, EngineProfile>> = {
  'h100-gpt-oss-20b': {
    stepOverheadS: 0.0045,
    perDecodeSeqS: 0.00004,
    perPrefillTokenS: 0.000013,
    perPrefillPairS: 0.6e-9,
    kvCacheTokens: 2_400_000,
  },
};

/** The profile used when none is named. */
export const DEFAULT_PROFILE = 'h100-gpt-oss-20b';

/** Duration of one step of `shape` under `profile`. */
export function stepDurationS(profile: EngineProfile, shape: StepShape): number {
  return (
    profile.stepOverheadS +
    profile.perDecodeSeqS * shape.decodeSeqs +
    profile.perPrefillTokenS * shape.prefillTokens +
    profile.perPrefillPairS * shape.prefillPairs
  );
}
