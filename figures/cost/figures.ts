// Pure: the budget figures of one group of requests (a class, or every class) over one window —
// token rates, rates per accelerator, the rate one user sees, and cost per million tokens — from
// counts the run already keeps. Cost follows the field's convention (InferenceX, SemiAnalysis):
// cost per million output tokens = $/hour / (output tokens/s × 3600) × 10⁶, the whole hour charged
// to output; the input and total figures charge the whole hour likewise, so they are alternatives
// to choose between, never parts that add up to the hour.
import type { Cost } from '../../shared/cost-schema.js';
import { usdPerHour } from '../../shared/cost-schema.js';

/** What the figures are computed from: the run's own counts of the window's successful requests. */
export interface TokenCounts {
  /** Successful requests of the window. */
  completed: number;
  /** Completion tokens of those requests (the count behind run.json throughput_tok_s). */
  outputTokens: number;
  /** Prompt tokens of those requests, from the server's usage (or the tokenizer where it sent none). */
  inputTokens: number;
  /** p50 TPOT of those requests, ms (run.json tpot_p50_ms); null when none had two counted tokens. */
  tpotP50Ms: number | null;
}

/** The price and accelerators a run's figures use. */
export interface CostBasis {
  usdPerHour: number | null;
  accelerators: { type: string; count: number } | null;
}

/** The figures of one group in one window (run.json cost.windows.<w>.total and .classes.<c>). */
export interface TokenFigures {
  successful_requests: number;
  output_tokens: number;
  input_tokens: number;
  output_tok_s: number | null;
  input_tok_s: number | null;
  total_tok_s: number | null;
  output_tok_s_per_accelerator: number | null;
  input_tok_s_per_accelerator: number | null;
  total_tok_s_per_accelerator: number | null;
  output_tok_s_per_user: number | null;
  usd_per_million_output_tokens: number | null;
  usd_per_million_input_tokens: number | null;
  usd_per_million_total_tokens: number | null;
}

/** The price and accelerators of a plan's cost (nulls without one). */
export function costBasis(cost: Cost | undefined): CostBasis {
  return { usdPerHour: usdPerHour(cost), accelerators: cost?.accelerators ?? null };
}

/** Why the dollar and per-accelerator figures are null, when they are (null: they are computed). */
export function nullReasons(cost: Cost | undefined): { usd_figures: string | null; per_accelerator_figures: string | null } {
  return {
    usd_figures:
      cost === undefined
        ? 'no cost given: set the plan cost (usd_per_hour, or usd_per_accelerator_hour with accelerators) or pass --cost-per-hour'
        : usdPerHour(cost) === null
          ? 'the plan cost names accelerators but no price (usd_per_hour or usd_per_accelerator_hour)'
          : null,
    per_accelerator_figures: cost?.accelerators
      ? null
      : 'no accelerator count: set the plan cost.accelerators or pass --accelerators TYPE:COUNT',
  };
}

/** The figures of one group over a window of `lengthS` seconds. */
export function tokenFigures(t: TokenCounts, lengthS: number, basis: CostBasis): TokenFigures {
  const rate = (n: number): number | null => (lengthS > 0 ? n / lengthS : null);
  const out = rate(t.outputTokens);
  const inp = rate(t.inputTokens);
  const total = rate(t.outputTokens + t.inputTokens);
  const count = basis.accelerators?.count ?? null;
  const perAccelerator = (r: number | null): number | null => (r === null || count === null ? null : round3(r / count));
  return {
    successful_requests: t.completed,
    output_tokens: t.outputTokens,
    input_tokens: t.inputTokens,
    output_tok_s: roundOrNull(out),
    input_tok_s: roundOrNull(inp),
    total_tok_s: roundOrNull(total),
    output_tok_s_per_accelerator: perAccelerator(out),
    input_tok_s_per_accelerator: perAccelerator(inp),
    total_tok_s_per_accelerator: perAccelerator(total),
    output_tok_s_per_user: t.tpotP50Ms !== null && t.tpotP50Ms > 0 ? round3(1000 / t.tpotP50Ms) : null,
    usd_per_million_output_tokens: usdPerMillion(basis.usdPerHour, out),
    usd_per_million_input_tokens: usdPerMillion(basis.usdPerHour, inp),
    usd_per_million_total_tokens: usdPerMillion(basis.usdPerHour, total),
  };
}

/** $/hour ÷ (tokens/s × 3600 s/hour) × 10⁶: the price of a million tokens at that rate; null without a price or tokens. */
export function usdPerMillion(usdPerHour: number | null, tokS: number | null): number | null {
  if (usdPerHour === null || tokS === null || tokS <= 0) return null;
  return round6((usdPerHour / (tokS * 3600)) * 1e6);
}

/** One sentence per figure of a group (keys relative to cost.windows.<w>.total or .classes.<c>). */
export const TOKEN_FIGURE_DEFINITIONS: Record<keyof TokenFigures, string> = {
  successful_requests:
    'successful requests (status ok) of the group whose intended (closed loop: sent) time fell in the window; only their tokens count',
  output_tokens: 'completion tokens of those requests, the count behind throughput_tok_s (usage, else the tokenizer, else chunk estimates)',
  input_tokens: 'prompt tokens of those requests, from the server usage (or the target tokenizer where the server sent none)',
  output_tok_s:
    'output_tokens / the window length in seconds: the same figure as classes.<c>.windows.<w>.throughput_tok_s, summed over the group',
  input_tok_s: 'input_tokens / the window length in seconds',
  total_tok_s: '(input_tokens + output_tokens) / the window length in seconds',
  output_tok_s_per_accelerator: 'output_tok_s / cost.accelerators.count (null without a count): the throughput axis of the Pareto front',
  input_tok_s_per_accelerator: 'input_tok_s / cost.accelerators.count (null without a count)',
  total_tok_s_per_accelerator: "total_tok_s / cost.accelerators.count (null without a count; InferenceX's tput_per_gpu)",
  output_tok_s_per_user:
    "1000 / the p50 TPOT in ms of the group's successful requests (TPOT = (done − first output) / (completion tokens − 1), exact counts only): the decode rate the median request saw, InferenceX's interactivity and AIPerf's output token throughput per user at the median; the interactivity axis of the Pareto front",
  usd_per_million_output_tokens:
    'cost.usd_per_hour / (output_tok_s × 3600) × 10⁶: the whole hour charged to output tokens, the convention of published cost-per-token figures (null without a price or output)',
  usd_per_million_input_tokens:
    'cost.usd_per_hour / (input_tok_s × 3600) × 10⁶: the whole hour charged to input tokens instead (an alternative to the output figure, not a part of the hour)',
  usd_per_million_total_tokens:
    'cost.usd_per_hour / (total_tok_s × 3600) × 10⁶: the whole hour charged to input and output tokens together',
};

function roundOrNull(x: number | null): number | null {
  return x === null ? null : round3(x);
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
