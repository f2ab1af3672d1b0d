import { describe, expect, it } from 'vitest';
import {
  cacheEvidence,
  dataQuality,
  headersHonoured,
  metricCaptureHealthy,
  outputTokenCounts,
  requestShape,
  scheduleKept,
  streamIntegrity,
} from './data-quality.js';
import { gateLine } from './gate-line.js';
import { declaredSlosEvaluated, noSafetyCeilingHit, openLoopArrivals, sloProof } from './slo-proof.js';
import type { ClassEvidence, SourceEvidence, ValidityInput } from './types.js';
import { gate } from './types.js';

function cls(over: Partial<ClassEvidence> = {}): ClassEvidence {
  return {
    name: 'realtime',
    openLoop: true,
    planned: 100,
    dispatched: 100,
    statusCounts: { ok: 100 },
    httpCounts: { '200': 100 },
    scheduleLagP99Ms: 2.5,
    scheduleLagMaxMs: 12,
    startSpreadMs: 1.2,
    fairnessId: 'realtime-chat',
    priority: 100,
    inputTokens: 4096,
    outputTokens: 128,
    ignoreEos: true,
    cache: 'unique',
    ok: 100,
    promptTokensMin: 4096,
    promptTokensMax: 4096,
    promptOutside: 0,
    promptUnreported: 0,
    promptExactPlanned: 100,
    promptDifferExact: 0,
    promptMaxDifference: 0,
    promptOutsideInexact: 0,
    promptLengthCheck: { sampled: 48, exact: 48, exact_share: 1, max_abs_difference: 0, unreachable: 0 },
    promptLengthMethod: 'server-tokenize',
    calibratedPromptTokens: 4096,
    completionMismatch: 0,
    outputSources: { usage: 100, tokenizer: 0, chunks: 0 },
    requireUsage: false,
    canary: false,
    canarySamples: 0,
    canaryPassed: 0,
    http200NotOk: 0,
    slo: { ttft_p95_ms: 250, success_rate_min: 0.99 },
    windows: {
      all: { requests: 100, completed: 100, slo_attainment: 0.4, ttft_p95_ms: 900, tpot_p95_ms: 7, e2e_p95_ms: 1900 },
      surge: { requests: 50, completed: 50, slo_attainment: 0, ttft_p95_ms: 15000, tpot_p95_ms: 7, e2e_p95_ms: 16000 },
    },
    ...over,
  };
}

function source(over: Partial<SourceEvidence> = {}): SourceEvidence {
  return {
    name: 'vllm',
    ticks_due: 20,
    scrapes: 20,
    samples_ok: 20,
    errors: 0,
    error_counts: {},
    first_errors: [],
    skipped_ticks: 0,
    pre_snapshot: 'ok',
    post_snapshot: 'ok',
    restarts: 0,
    ...over,
  };
}

function input(over: Partial<ValidityInput> = {}): ValidityInput {
  return {
    classes: [cls()],
    scheduleSha256: 'abc',
    offeredScheduleSha256: 'abc',
    abortReason: null,
    clientLimited: false,
    clientReasons: [],
    lostAgents: [],
    sources: [source(), source({ name: 'epp' })],
    server: {
      vllm_prefix_cache_queries_delta: 0,
      vllm_prefix_cache_hits_delta: 0,
      max_pool_saturation: 1.2,
      flow_control_materially_engaged: true,
      gateway_restarts: 0,
    },
    fairnessPriorities: { 'realtime-chat': ['100'] },
    ...over,
  };
}

describe('data quality', () => {
  it('is valid when every check passes', () => {
    const g = dataQuality(input());
    expect(g.checks.map((c) => [c.name, c.status])).toEqual([
      ['schedule_kept', 'pass'],
      ['metric_capture_healthy', 'pass'],
      ['headers_honoured', 'pass'],
      ['cache_evidence_matches_declaration', 'pass'],
      ['stream_integrity', 'pass'],
      ['request_shape', 'pass'],
      ['output_token_counts', 'pass'],
    ]);
    expect(g.valid).toBe(true);
    expect(Object.keys(g.definitions)).toEqual(g.checks.map((c) => c.name));
  });

  it('is valid against engine-sim without a gateway when no class sends a fairness header (45,018 of 45,018 ok)', () => {
    const sim = input({
      classes: [
        cls({
          fairnessId: null,
          planned: 45_018,
          dispatched: 45_018,
          ok: 45_018,
          statusCounts: { ok: 45_018 },
          httpCounts: { '200': 45_018 },
          outputSources: { usage: 45_018, tokenizer: 0, chunks: 0 },
        }),
      ],
      sources: [source({ name: 'engine-sim' })],
      server: { vllm_prefix_cache_queries_delta: 0, vllm_prefix_cache_hits_delta: 0, max_pool_saturation: null },
      fairnessPriorities: {},
    });
    const g = dataQuality(sim);
    expect(g.valid).toBe(true);
    expect(g.not_applicable).toEqual([{ name: 'headers_honoured', reason: 'no class that sent requests carries a fairness id header' }]);
    expect(g.applied).not.toContain('headers_honoured');
    expect(g.applies_because).toMatchObject({
      metric_capture_healthy: '1 scrape source(s): engine-sim',
      cache_evidence_matches_declaration: 'every class declares unique prompts and the plan scrapes the server',
    });
    expect(dataQuality(input()).applies_because.headers_honoured).toBe('class(es) realtime send a fairness id header');
    expect(gateLine('data quality', g)).toBe(
      '  data quality: valid (6 of 7 checks applied; not applicable — headers_honoured: no class that sent requests carries a fairness id header)',
    );
    // A plain server (no scrape list, no usage of a gateway): still judgeable, never stuck at not valid.
    const plain = dataQuality({ ...sim, sources: [], server: {} });
    expect(plain.valid).toBe(true);
    expect(plain.not_applicable.map((c) => c.name)).toEqual([
      'metric_capture_healthy',
      'headers_honoured',
      'cache_evidence_matches_declaration',
    ]);
    // A check that applies and lacks evidence still keeps the gate from passing.
    const open = dataQuality({ ...sim, classes: [cls({ fairnessId: 'x' })] });
    expect(open.valid).toBe(false);
    expect(gateLine('data quality', open)).toMatch(
      /^ {2}data quality: NOT valid \(not evaluated headers_honoured; 7 of 7 checks applied\)$/,
    );
  });

  it('schedule kept fails on each limit, at the limit passing', () => {
    expect(scheduleKept(input({ classes: [cls({ startSpreadMs: 50, scheduleLagP99Ms: 100, scheduleLagMaxMs: 500 })] })).status).toBe(
      'pass',
    );
    const c = scheduleKept(
      input({
        classes: [cls({ dispatched: 97, startSpreadMs: 50.5, scheduleLagP99Ms: 100.1, scheduleLagMaxMs: 501 })],
        offeredScheduleSha256: 'xyz',
      }),
    );
    expect(c.status).toBe('fail');
    expect(c.reason).toBe(
      'realtime: 97 of 100 planned requests dispatched; realtime: start spread 50.5 ms > 50 ms; realtime: schedule lag p99 100.1 ms > 100 ms; realtime: schedule lag max 501 ms > 500 ms; the offered schedule hash differs from the plan schedule hash',
    );
    expect(c.evidence.offered_schedule_matches).toBe(false);
  });

  it('metric capture: not applicable without sources, fails on errors, skips, gaps, snapshots and restarts', () => {
    expect(metricCaptureHealthy(input({ sources: [] }))).toMatchObject({
      status: 'not_applicable',
      reason: 'nothing was scraped: the plan has a target and declares no scrape list',
    });
    const c = metricCaptureHealthy(
      input({
        sources: [
          source({ name: 'a', errors: 3, error_counts: { timeout: 2, garbled: 1 }, samples_ok: 18 }),
          source({ name: 'b', skipped_ticks: 1, scrapes: 19, samples_ok: 19, restarts: 1, post_snapshot: 'unreachable: ECONNREFUSED' }),
        ],
      }),
    );
    expect(c.status).toBe('fail');
    expect(c.reason).toBe(
      'a: 3 scrape error(s) (2 timeout, 1 garbled); a: 18 of 20 ticks sampled; b: 1 skipped tick(s); b: 19 of 20 ticks sampled; b: post snapshot unreachable: ECONNREFUSED; b: restarted 1 time(s)',
    );
  });

  it('headers honoured: checks the declared priority for the fairness id', () => {
    const wrong = headersHonoured(input({ fairnessPriorities: { 'realtime-chat': ['0'] } }));
    expect(wrong.status).toBe('fail');
    expect(wrong.reason).toMatch(/appears with priority 0, not the declared 100/);
    expect(headersHonoured(input({ fairnessPriorities: {} })).reason).toMatch(/never appears/);
    expect(headersHonoured(input({ classes: [cls({ priority: null })], fairnessPriorities: { 'realtime-chat': ['7'] } })).status).toBe(
      'pass',
    );
    // No class sends the header: nothing to honour, whatever the gateway exposes.
    expect(headersHonoured(input({ classes: [cls({ fairnessId: null })] })).status).toBe('not_applicable');
    expect(headersHonoured(input({ classes: [cls({ fairnessId: null })], fairnessPriorities: {}, server: {} })).status).toBe(
      'not_applicable',
    );
    // A class sends it and no gateway metrics exist: the check applies and lacks its evidence.
    const open = headersHonoured(input({ fairnessPriorities: {}, server: { max_pool_saturation: null } }));
    expect(open).toMatchObject({ status: 'not_evaluated' });
    expect(open.reason).toMatch(/^class\(es\) realtime send a fairness id header, and no scrape source exposes gateway/);
  });

  it('cache evidence: hits with unique prompts fail; shared prompts or nothing scraped are not applicable; scraped sources without the counters leave it not evaluated', () => {
    expect(
      cacheEvidence(input({ server: { vllm_prefix_cache_queries_delta: 9000, vllm_prefix_cache_hits_delta: 0 } })).evidence
        .prefix_caching_inferred,
    ).toBe('on');
    const hit = cacheEvidence(input({ server: { vllm_prefix_cache_queries_delta: 9000, vllm_prefix_cache_hits_delta: 64 } }));
    expect(hit.status).toBe('fail');
    expect(hit.reason).toMatch(/^64 prompt tokens hit/);
    expect(cacheEvidence(input({ classes: [cls({ cache: 'shared' })] })).status).toBe('not_applicable');
    // Sources scraped, no prefix-cache counter among them: the unique-prompt claim is unproven, not inapplicable.
    expect(cacheEvidence(input({ server: {} }))).toMatchObject({
      status: 'not_evaluated',
      reason:
        'every class declares unique prompts (the prefix cache must find nothing), and no scraped source (vllm, epp) exposes vllm:prefix_cache_hits_total to prove it with',
    });
    expect(cacheEvidence(input({ server: {}, sources: [] })).reason).toMatch(/^nothing was scraped/);
    const trace = cls({ name: 'trace', cache: 'trace', impliedPrefixHitTokens: 7000 });
    expect(cacheEvidence(input({ classes: [trace], server: {} })).status).toBe('not_evaluated');
    expect(cacheEvidence(input({ classes: [trace], server: {}, sources: [] })).status).toBe('not_applicable');
  });

  it('cache evidence with a replayed trace: hits within 5% of the queried tokens of what its hash ids imply', () => {
    const trace = cls({ name: 'trace', cache: 'trace', impliedPrefixHitTokens: 7000 });
    const at = (hits: number, queries = 10_000) =>
      cacheEvidence(
        input({ classes: [trace, cls()], server: { vllm_prefix_cache_queries_delta: queries, vllm_prefix_cache_hits_delta: hits } }),
      );
    expect(at(7000).status).toBe('pass');
    expect(at(6500).status).toBe('pass');
    expect(at(6400).reason).toBe(
      '6400 prompt tokens hit the prefix cache; the replayed trace or sessions imply 7000 (off by 600, more than 5% of 10000 queried)',
    );
    expect(at(0, 0).status).toBe('pass');
    expect(at(7000).evidence.implied_prefix_hit_tokens).toBe(7000);
  });

  it('stream integrity and request shape count the exceptions', () => {
    const s = streamIntegrity(input({ classes: [cls({ completionMismatch: 2, http200NotOk: 1 })] }));
    expect(s.reason).toBe(
      'realtime: 1 HTTP 200 response(s) without a clean stream; realtime: 2 successful request(s) without exactly 128 completion tokens',
    );
    expect(streamIntegrity(input({ classes: [cls({ completionMismatch: 2, ignoreEos: false })] })).status).toBe('pass');
    expect(streamIntegrity(input({ classes: [cls({ httpCounts: { '429': 5 } })] })).status).toBe('not_evaluated');
    // Counted on the target: exactly, so one token off fails.
    const r = requestShape(input({ classes: [cls({ promptDifferExact: 3, promptMaxDifference: 1, promptTokensMin: 4095 })] }));
    expect(r.status).toBe('fail');
    expect(r.reason).toBe('realtime: 3 of 100 request(s) differ from their planned prompt tokens (by up to 1)');
    expect(r.evidence.classes).toEqual({
      realtime: {
        input_tokens: 4096,
        successful: 100,
        prompt_length_method: 'server-tokenize',
        compared: 'exactly',
        calibrated_prompt_tokens: 4096,
        prompt_length_check: { sampled: 48, exact: 48, exact_share: 1, max_abs_difference: 0, unreachable: 0 },
        prompt_tokens_min: 4095,
        prompt_tokens_max: 4096,
        planned_exactly: 100,
        differ_from_planned: 3,
        max_abs_difference: 1,
        outside_tolerance: 0,
        later_turns_outside_tolerance: 0,
        prompt_tokens_unreported: 0,
        prompt_length_check_error: null,
        prompt_exactness: null,
      },
    });
    // Sized in words: within ±10% of input_tokens.
    const words = { promptLengthMethod: 'words-unverified', calibratedPromptTokens: null } as const;
    expect(requestShape(input({ classes: [cls({ ...words, promptDifferExact: 3, promptMaxDifference: 1 })] })).status).toBe('pass');
    const outside = requestShape(input({ classes: [cls({ ...words, promptOutside: 3, promptTokensMin: 3000 })] }));
    expect(outside.reason).toBe('realtime: 3 request(s) with prompt tokens outside ±10% of 4096');
    expect(requestShape(input({ classes: [cls({ ok: 0 })] })).status).toBe('not_evaluated');
  });

  it('a server without usage: prompts counted at calibration decide the shape; chunk counts are stated', () => {
    const noUsage = {
      promptUnreported: 100,
      promptTokensMin: null,
      promptTokensMax: null,
      outputSources: { usage: 0, tokenizer: 0, chunks: 100 },
    };
    expect(requestShape(input({ classes: [cls(noUsage)] })).status).toBe('pass');
    const off = requestShape(input({ classes: [cls({ ...noUsage, calibratedPromptTokens: 4600 })] }));
    expect(off.reason).toBe(
      "realtime: the target's tokenizer counted 4600 prompt tokens for 100 request(s) without usage, outside ±10% of 4096",
    );
    const never = requestShape(
      input({ classes: [cls({ ...noUsage, calibratedPromptTokens: null, promptLengthMethod: 'words-unverified' })] }),
    );
    expect(never.status).toBe('not_evaluated');
    const counts = outputTokenCounts(input({ classes: [cls({ ...noUsage, outputSources: { usage: 40, tokenizer: 35, chunks: 25 } })] }));
    expect(counts.status).toBe('pass');
    expect(counts.evidence).toEqual({
      classes: { realtime: { successful: 100, usage: 40, tokenizer: 35, chunks: 25, estimated_share: 0.25 } },
      estimated_share: 0.25,
    });
    expect(streamIntegrity(input({ classes: [cls(noUsage)] })).status).toBe('pass');
    expect(outputTokenCounts(input({ classes: [cls({ ok: 0 })] })).status).toBe('not_evaluated');
  });

  it('a server without usage: no body counted before load, or a failed count, leaves request_shape not evaluated', () => {
    const noUsage = { promptUnreported: 100, promptTokensMin: null, promptTokensMax: null, calibratedPromptTokens: null };
    // A class whose requests differ (no one calibrated count): only the pre-load sample can stand in for usage.
    const perRequest = { ...noUsage, inputTokens: "each request's own (lognormal)" };
    const failed = requestShape(
      input({ classes: [cls({ ...perRequest, promptLengthCheck: null, promptLengthCheckError: 'tokenize: HTTP 500' })] }),
    );
    expect(failed).toMatchObject({
      status: 'not_evaluated',
      reason: 'realtime: 100 request(s) without usage, and the pre-load count of sampled bodies failed (tokenize: HTTP 500)',
    });
    expect(failed.evidence.classes).toMatchObject({ realtime: { prompt_length_check_error: 'tokenize: HTTP 500' } });
    const never = requestShape(input({ classes: [cls({ ...perRequest, promptLengthCheck: null })] }));
    expect(never).toMatchObject({
      status: 'not_evaluated',
      reason: 'realtime: 100 request(s) without usage, and no body was counted before load',
    });
    const empty = { sampled: 0, exact: 0, exact_share: 1, max_abs_difference: 0, unreachable: 0 };
    expect(requestShape(input({ classes: [cls({ ...perRequest, promptLengthCheck: empty })] })).status).toBe('not_evaluated');
    // The sample was counted and exact: it stands in for usage.
    expect(requestShape(input({ classes: [cls(perRequest)] })).status).toBe('pass');
    // A class whose count failed says so where it is judged.
    const countFailed = cls({
      ...noUsage,
      promptLengthMethod: 'words-unverified',
      promptExactness: {
        rows: 100,
        exact_rows: 0,
        not_exact: [
          { reason: 'count_failed', rows: 100, first_request_indices: null, why: 'counting on the target failed before load (x)' },
        ],
      },
    });
    expect(requestShape(input({ classes: [countFailed] })).reason).toBe(
      'realtime: 100 request(s) without usage and a prompt length never counted (counting on the target failed before load (x))',
    );
  });

  it('stream integrity says how many outputs of an ignore_eos class no usage proved', () => {
    const partly = streamIntegrity(input({ classes: [cls({ outputSources: { usage: 60, tokenizer: 0, chunks: 40 } })] }));
    expect(partly.evidence.classes).toMatchObject({ realtime: { completion_tokens_unverified: 40 } });
    const free = streamIntegrity(input({ classes: [cls({ ignoreEos: false })] }));
    expect(free.evidence.classes).toMatchObject({ realtime: { completion_tokens_unverified: null } });
  });

  it('schedule kept is not evaluated when no class sent a request', () => {
    const idle = cls({ planned: null, openLoop: false, dispatched: 0, statusCounts: {}, startSpreadMs: null, scheduleLagP99Ms: null });
    expect(scheduleKept(input({ classes: [idle] }))).toMatchObject({
      status: 'not_evaluated',
      reason: 'no class sent a request: nothing shows the schedule was kept',
    });
    // Planned and never sent is a failure, not a lack of evidence.
    expect(scheduleKept(input({ classes: [cls({ dispatched: 0, statusCounts: {} })] })).status).toBe('fail');
  });

  it('checks canaries only where a class declares them', () => {
    const g = dataQuality(input({ classes: [cls({ canary: true, canarySamples: 100, canaryPassed: 97 })] }));
    const c = g.checks.find((x) => x.name === 'request_canaries')!;
    expect(c.reason).toBe('realtime: 3 of 100 canaries failed');
    expect(Object.keys(g.definitions)).toEqual(g.checks.map((x) => x.name));
    expect(dataQuality(input({ classes: [cls({ canary: true, canarySamples: 5, canaryPassed: 5 })] })).valid).toBe(true);
    expect(dataQuality(input()).checks.some((x) => x.name === 'request_canaries')).toBe(false);
    // One canary class checked, another never: the second shows nothing, so the check is not evaluated.
    const unchecked = dataQuality(
      input({
        classes: [
          cls({ canary: true, canarySamples: 5, canaryPassed: 5 }),
          cls({ name: 'batch', canary: true, canarySamples: 0, canaryPassed: 0 }),
        ],
      }),
    ).checks.find((x) => x.name === 'request_canaries')!;
    expect(unchecked).toMatchObject({ status: 'not_evaluated', reason: 'no response of canary class(es) batch was checked' });
  });
});

describe('slo proof', () => {
  it('is valid with a badly missed SLO: attainment is evidence, not the verdict', () => {
    const g = sloProof(input());
    expect(g.valid).toBe(true);
    const c = g.checks.find((x) => x.name === 'declared_slos_evaluated')!;
    expect(c.evidence.classes).toEqual({
      realtime: {
        slo: { ttft_p95_ms: 250, success_rate_min: 0.99 },
        slo_attainment: 0.4,
        windows: {
          all: { requests: 100, slo_attainment: 0.4, ttft_p95_ms: 900, ttft_p95_met: false, success_rate: 1, success_rate_met: true },
          surge: { requests: 50, slo_attainment: 0, ttft_p95_ms: 15000, ttft_p95_met: false, success_rate: 1, success_rate_met: true },
        },
      },
    });
    expect(g.checks.map((x) => x.name)).toEqual(['open_loop_arrivals', 'no_safety_ceiling_hit', 'declared_slos_evaluated']);
  });

  it('fails on closed loops, ceilings and SLO classes without requests; not applicable without SLOs', () => {
    expect(openLoopArrivals(input({ classes: [cls({ openLoop: false })] })).status).toBe('fail');
    const ceiling = noSafetyCeilingHit(
      input({
        classes: [cls({ statusCounts: { ok: 90, timeout: 10 } })],
        clientLimited: true,
        clientReasons: ['agent-1 schedule lag p99 80 ms > 50 ms'],
      }),
    );
    expect(ceiling.reason).toBe('10 request(s) hit the client timeout; client limited: agent-1 schedule lag p99 80 ms > 50 ms');
    expect(noSafetyCeilingHit(input({ abortReason: 'SIGINT', lostAgents: ['agent-2'] })).reason).toBe(
      'aborted: SIGINT; lost agent(s): agent-2',
    );
    const empty = cls({
      windows: { all: { requests: 0, completed: 0, slo_attainment: null, ttft_p95_ms: null, tpot_p95_ms: null, e2e_p95_ms: null } },
    });
    expect(declaredSlosEvaluated(input({ classes: [empty] })).reason).toBe('realtime declares an SLO but sent no request');
    const none = sloProof(input({ classes: [cls({ slo: null })] }));
    expect(none.valid).toBe(true); // rests on no_safety_ceiling_hit alone, and says so
    expect(none.applied).toEqual(['no_safety_ceiling_hit']);
    expect(sloProof(input()).applies_because.declared_slos_evaluated).toBe('class(es) realtime declare an SLO');
    expect(none.not_applicable).toEqual([
      { name: 'open_loop_arrivals', reason: 'no class declares an SLO' },
      { name: 'declared_slos_evaluated', reason: 'no class declares an SLO' },
    ]);
  });

  it('reads the SLO verdict: a not_evaluable verdict leaves declared_slos_evaluated not evaluated, and its figures rank failures +∞', () => {
    const criteria = (met: boolean | null, figure: number | null, on_failure = false) => [
      { criterion: 'ttft_p95_ms' as const, figure, bound: 250, comparison: '<=' as const, met, on_failure, reason: null },
    ];
    const window = (verdict: 'met' | 'missed' | 'not_evaluable', c: ReturnType<typeof criteria>, reason: string | null = null) => ({
      verdict,
      requests: 100,
      criteria: c,
      reason,
    });
    const missedOnFailures = cls({
      slo: { ttft_p95_ms: 250 },
      sloVerdict: {
        verdict: 'missed',
        missed_in: ['all'],
        not_evaluable_in: [],
        windows: { all: window('missed', criteria(false, null, true)), surge: window('met', criteria(true, 200)) },
      },
    });
    const judged = declaredSlosEvaluated(input({ classes: [missedOnFailures] }));
    expect(judged.status).toBe('pass');
    // The successful-only p95 of window all (900 ms) is not what decided: the verdict's figure and met are.
    expect((judged.evidence.classes as any).realtime.windows.all).toMatchObject({
      verdict: 'missed',
      ttft_p95_ms: null,
      ttft_p95_met: false,
    });
    const open = cls({
      slo: { ttft_p95_ms: 250 },
      sloVerdict: {
        verdict: 'not_evaluable',
        missed_in: [],
        not_evaluable_in: ['all'],
        windows: { all: window('not_evaluable', criteria(null, null), 'p95 TTFT: no successful request had a first content token') },
      },
    });
    expect(declaredSlosEvaluated(input({ classes: [open] }))).toMatchObject({
      status: 'not_evaluated',
      reason: 'realtime: SLO not evaluable in all (p95 TTFT: no successful request had a first content token)',
    });
  });

  it('checks flow control only when an expectation is declared', () => {
    expect(sloProof(input({ expectFlowControlEngaged: true })).checks.at(-1)).toMatchObject({
      name: 'flow_control_as_expected',
      status: 'pass',
    });
    expect(sloProof(input({ expectFlowControlEngaged: false })).checks.at(-1)).toMatchObject({ status: 'fail' });
    expect(sloProof(input({ expectFlowControlEngaged: false, server: {} })).checks.at(-1)).toMatchObject({ status: 'not_evaluated' });
    expect(sloProof(input({ expectFlowControlEngaged: false })).valid).toBe(false);
  });

  it('never passes an empty gate, nor one where nothing applied', () => {
    expect(gate([], {}).valid).toBe(false);
    expect(gate([{ name: 'x', status: 'not_applicable', evidence: {}, reason: 'r' }], {}).valid).toBe(false);
  });
});
