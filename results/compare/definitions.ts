// One sentence per field of comparison.json: every number the artifact carries is defined in it.

export const COMPARISON_DEFINITIONS: Record<string, string> = {
  schema: 'the artifact schema, loadfleet.comparison/v1',
  baseline:
    'the baseline side: its label, the run ids compared (runs), their directories (dirs), and source: null for loadfleet runs, or where a baseline from another tool came from',
  'baseline.source':
    'a baseline from another tool: format (vllm, guidellm, aiperf, benchmark-report), tool, version (as the file states it; null when it does not), file, data, order, requests, failed, excluded, figures and load',
  'baseline.source.format':
    'the baseline file format read: vllm, guidellm, aiperf or benchmark-report (told by content, or named by --baseline-format)',
  'baseline.source.tool':
    'the tool that wrote the baseline file (for a Benchmark Report, the report version and the tool that produced it)',
  'baseline.source.version':
    "the tool's version as the file states it; null when the file does not state one (vLLM's and AIPerf's results do not)",
  'baseline.source.file': 'the baseline file read',
  'baseline.source.data':
    "per-request: the file holds each request, so the baseline is bootstrapped in blocks like a loadfleet run of one repeat; aggregate: the file holds the tool's percentiles only, each compared as a fixed point without the baseline's own sampling variation (limits says what that means for the false-alarm rate)",
  'baseline.source.order':
    "how the baseline's requests were put in time order for the block bootstrap: send-time (sorted by the file's send stamps) or file-order-is-send-order (the tool lists them in the order it issued them); null for aggregates",
  'baseline.source.requests': 'requests the baseline counts (left-out ones excluded), every status',
  'baseline.source.failed':
    'of them, requests that failed: they rank +∞ in the baseline’s latency percentiles as in loadfleet’s (for aggregates, by reading the successes’ percentile at q·requests / (requests − failed)); null when the file does not say',
  'baseline.source.excluded':
    'requests the file lists but the comparison leaves out (warm-up, cancelled, cut by the end), with why; null when none',
  'baseline.source.figures':
    "per loadfleet figure: the file's field read (JSON path), the unit conversion to ms, whether the definitions are the same, close (the same quantity stamped at slightly different instants) or absent, and how they differ",
  'baseline.source.load':
    'the load the baseline tool offered, as its file states it: loadfleet cannot check it against the candidate’s plan',
  candidate: 'the candidate side, as baseline',
  seed: 'the seed of every bootstrap generator of this comparison',
  'classes.<c>.<w>[].figure': 'the figure compared: <metric>_p<q>_ms, success_rate or goodput_rps',
  'classes.<c>.<w>[].unit': "the figure's unit: ms, share (0–1) or req/s",
  'classes.<c>.<w>[].better': 'which way the figure improves: lower (latency) or higher (success rate, goodput)',
  'classes.<c>.<w>[].reason': 'why the figure is not_evaluable (null otherwise)',
  method:
    "block-bootstrap-one-run when a side holds one run: each run's requests, in intended-send order, are resampled in blocks of consecutive requests (the stationary bootstrap, mean block length chosen from the data by Politis and White's rule) so that a queue's autocorrelation stays in the interval; two-level-repeats when each side holds 2 or more runs: a side's figure is the mean of its runs' figures, its variance the runs' sample variance / runs (never below their mean within-run block-bootstrap variance / runs), with runs − 1 degrees of freedom (Kalibera and Jones's two levels: runs, then requests within runs)",
  confidence:
    'the two-sided coverage of every interval; by default 1 − 2 × false_alarm (0.9: 5% on each side), so each end is the one-sided bound at the level a single figure is decided at',
  false_alarm:
    'the family-wise rate of false regressions held over the gating figures: Holm’s step-down over their one-sided p_worse values, so the chance that any gating figure of an unchanged server reads regressed is at most this',
  resamples:
    "bootstrap replicates per figure and side (at least gating figures / false_alarm, so a percentile-bootstrap p-value, never below 1 / (resamples + 1), can reach Holm's strictest level), from a generator seeded by seed, class, window and figure (the same inputs give the same intervals)",
  gating:
    "class/window/figure of the figures that decide --fail-on-regression: by default each class's SLO figures (ttft_p95_ms, tpot_p95_ms, e2e_p95_ms, success_rate for success_rate_min) in window all, or those named with --gate-on",
  limits: 'what this comparison cannot tell, in sentences (e.g. run-to-run variation with one run a side)',
  'classes.<c>.<w>[].gating': 'whether the figure decides --fail-on-regression',
  'classes.<c>.<w>[].baseline':
    "the figure on the baseline side: for latency, the exact nearest-rank percentile in ms over the window's requests (by intended send time) from requests.ndjson, a failed request ranking +∞ (ITL: run.json's histogram percentile, as ITL gaps are not recorded per request); success_rate = completed / requests; goodput_rps as run.json defines it; with repeats, the mean over runs; null when +∞ (see failures_decide)",
  'classes.<c>.<w>[].candidate': 'the same figure on the candidate side',
  'classes.<c>.<w>[].failures_decide':
    "the sides whose figure is +∞ because failed requests reach its rank (more than 5% failed for a p95): the figure is then null and the test reads the bootstrap's replicates, +∞ included",
  'classes.<c>.<w>[].delta': "candidate − baseline, in the figure's unit; null when both are +∞",
  'classes.<c>.<w>[].delta_relative': 'delta / baseline (null when the baseline is 0 or +∞)',
  'classes.<c>.<w>[].interval':
    "the two-sided interval of delta at the stated confidence (each end a one-sided bound at 1 − (1 − confidence) / 2): delta ± Student's t × its standard error (Welch's degrees of freedom), or the percentile interval of the replicates' differences when +∞ values enter; an end is null when unbounded; null when no interval could be formed (see reason)",
  'classes.<c>.<w>[].p_worse':
    "the one-sided p-value of the candidate being worse (higher latency, lower success rate or goodput): Welch's t from both sides' variances, or the share of bootstrap replicate differences not worse when +∞ values enter",
  'classes.<c>.<w>[].p_worse_adjusted':
    "Holm's adjusted p_worse_beyond_margin over the gating figures (null for figures that do not gate): a gating figure regresses when it is at most false_alarm",
  'classes.<c>.<w>[].p_worse_beyond_margin':
    'the one-sided p-value of the candidate being worse by more than margin.total (Welch’s t shifted by the margin, or the share of replicate differences within it); equal to p_worse when there is no margin',
  'classes.<c>.<w>[].margin':
    "with one run on a side, what a worsening must clear besides its interval, in the figure's unit: timing, the stamps' timing uncertainty (for TTFT and e2e percentiles: how far the candidate's requests' own first_content_uncertainty_ns, the agents' per-request estimate of how late a token's bytes were stamped, which run.json client_health summarises, can raise the figure: its percentile of the recorded values less its percentile of each value minus its uncertainty; late stamps only raise a latency, so a regression clears the candidate's and an improvement the baseline's; 0 for other figures), run_to_run, the run_to_run_floor of the figure's percentile level × the baseline (latency and goodput figures, goodput at the p50's; 0 for success_rate, whose run-to-run variation the block bootstrap's binomial noise covers), and total; null with repeats a side, whose variance holds run-to-run variation",
  'classes.<c>.<w>[].worse_bound':
    "for a gating figure: the one-sided bound of delta on the worse side (lower for latency, upper for success rate and goodput) at Holm's strictest level, false_alarm / gating figures; a figure whose bound clears margin.total regresses (Holm's later steps may also flag one whose bound falls short, as p_worse_adjusted says)",
  run_to_run_floor:
    'with one run on a side: per percentile level (p50, p95, p99; goodput takes the p50’s), the share of the baseline a latency or goodput change must clear besides its interval and timing uncertainty (--run-to-run-floor-pct / 100); null with repeats a side',
  ttft_basis:
    "class → what its TTFT figures measure from: sent (the actual send) or intended (slo.basis intended, the SLO verdict's basis: the client's own delay counts); mixed when the runs' bases differ; a baseline from another tool is compared on the tool's own definition (limits says which)",
  undecided:
    'class/window/figure of every gating figure whose change is beyond its interval and threshold but not beyond its margin: one run a side cannot tell it from run-to-run variation or timing error (exit --undecided-exit with --fail-on-regression, default 0)',
  'reported.undecided': 'class/window/figure of every other figure undecided at its own level',
  'classes.<c>.<w>[].detectable_change':
    "the smallest true worsening, in the figure's unit, that this comparison would flag 4 times in 5: margin.total + (t at Holm's strictest level false_alarm / gating figures + t at 0.8) standard errors, and never below the threshold; null for figures that do not gate or whose standard error is unbounded",
  'classes.<c>.<w>[].detectable_change_relative': 'detectable_change / baseline',
  'classes.<c>.<w>[].block_len': "the mean length in requests of the resampled blocks on each side (mean over the side's runs)",
  'classes.<c>.<w>[].correlation_time':
    "how far the series' autocorrelation reaches, in requests, on each side: Σ|k|γ(k) / Σγ(k) over a flat-top window (mean over runs); a block bootstrap's variance falls short by about correlation_time / block_len, which the variance is corrected for",
  'classes.<c>.<w>[].verdict':
    'for a gating figure: regressed when Holm rejects "not worse by more than margin.total" at false_alarm and |delta| exceeds the threshold; for any other figure: regressed when its interval excludes margin.total on the worse side and |delta| exceeds the threshold; improved likewise on the better side; undecided when the same tests reject "not worse" without the margin but not with it (one run a side cannot tell a worsening from what it cannot measure; an improvement short of its margin is within_noise); within_noise otherwise; not_evaluable when a side has no value or its value is an approximation shown but not tested (see reason)',
  thresholds:
    'relative: the smallest |delta_relative| of a latency or goodput figure that counts; success_rate_points: the smallest |delta| of success_rate that counts',
  comparable:
    'whether both sides ran the same load (same_plan_and_schedule null when the baseline comes from another tool: not checkable): the same plan apart from its target and prompt calibration (SHA-256 of the rest: classes, phases, windows, seed, duration — a new build at a new address is what a comparison is for) and the same schedule (schedule_sha256); a comparison of different ones is refused unless --allow-different-plans, and then says so here with the problems',
  regressed: 'class/window/figure of every gating figure that regressed (exit 5 with --fail-on-regression)',
  improved: 'class/window/figure of every gating figure that improved',
  reported:
    'the non-gating figures beyond noise and threshold at their own level (regressed, improved): reported, never deciding the exit code',
  classes: 'class → window → the compared figures, each defined below',
  'reported.regressed': 'class/window/figure of every other figure that regressed at its own level (reported, not gating)',
  'reported.improved': 'class/window/figure of every other figure that improved at its own level',
};
