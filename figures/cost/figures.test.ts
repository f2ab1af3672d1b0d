import { describe, expect, it } from 'vitest';
import { costBasis, nullReasons, tokenFigures, usdPerMillion } from './figures.js';

describe('token and cost figures', () => {
  it('computes rates, per-accelerator rates, the per-user rate and cost per million tokens by the published formula', () => {
    // 8 × H100 at $98.32/h; 120 s window, 360 000 output and 1 200 000 input tokens of 300 requests, p50 TPOT 20 ms.
    const basis = costBasis({ usd_per_hour: 98.32, accelerators: { type: 'H100-80GB', count: 8 } });
    const f = tokenFigures({ completed: 300, outputTokens: 360_000, inputTokens: 1_200_000, tpotP50Ms: 20 }, 120, basis);
    expect(f.output_tok_s).toBe(3000);
    expect(f.input_tok_s).toBe(10_000);
    expect(f.total_tok_s).toBe(13_000);
    expect(f.output_tok_s_per_accelerator).toBe(375);
    expect(f.input_tok_s_per_accelerator).toBe(1250);
    expect(f.total_tok_s_per_accelerator).toBe(1625);
    expect(f.output_tok_s_per_user).toBe(50);
    // 98.32 / (3000 × 3600) × 1e6 = 9.103704 $ per million output tokens
    expect(f.usd_per_million_output_tokens).toBe(9.103704);
    expect(f.usd_per_million_input_tokens).toBe(2.731111);
    expect(f.usd_per_million_total_tokens).toBe(2.100855);
  });

  it('multiplies a per-accelerator price by the count', () => {
    const basis = costBasis({ usd_per_accelerator_hour: 2, accelerators: { type: 'L4', count: 4 } });
    expect(basis.usdPerHour).toBe(8);
    // 8 $/h at 1000 tok/s: 8 / 3.6e6 × 1e6 = 2.222222
    expect(
      tokenFigures({ completed: 1, outputTokens: 10_000, inputTokens: 0, tpotP50Ms: null }, 10, basis).usd_per_million_output_tokens,
    ).toBe(2.222222);
  });

  it('keeps the token rates without a cost and says why the rest is null', () => {
    const f = tokenFigures({ completed: 2, outputTokens: 100, inputTokens: 50, tpotP50Ms: 10 }, 10, costBasis(undefined));
    expect(f.output_tok_s).toBe(10);
    expect(f.output_tok_s_per_user).toBe(100);
    expect(f.output_tok_s_per_accelerator).toBeNull();
    expect(f.usd_per_million_output_tokens).toBeNull();
    expect(nullReasons(undefined).usd_figures).toMatch(/no cost given/);
    expect(nullReasons(undefined).per_accelerator_figures).toMatch(/no accelerator count/);
    expect(nullReasons({ accelerators: { type: 'x', count: 1 } })).toEqual({
      usd_figures: expect.stringMatching(/no price/),
      per_accelerator_figures: null,
    });
    expect(nullReasons({ usd_per_hour: 1, accelerators: { type: 'x', count: 1 } })).toEqual({
      usd_figures: null,
      per_accelerator_figures: null,
    });
  });

  it('gives no cost for no tokens and no rate for an empty window', () => {
    expect(usdPerMillion(10, 0)).toBeNull();
    expect(usdPerMillion(null, 5)).toBeNull();
    const f = tokenFigures({ completed: 0, outputTokens: 0, inputTokens: 0, tpotP50Ms: null }, 0, costBasis({ usd_per_hour: 1 }));
    expect(f.output_tok_s).toBeNull();
    expect(f.usd_per_million_output_tokens).toBeNull();
  });
});
