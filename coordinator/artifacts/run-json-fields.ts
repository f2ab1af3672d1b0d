// run.json's field definitions: one sentence for every figure the writer (run-json.ts) puts in
// it, gathered from the modules that compute them.

import { CLIENT_HEALTH_DEFINITIONS } from '../../figures/client-health.js';
import { GOODPUT_DEFINITIONS } from '../../figures/goodput.js';
import { LORA_DEFINITIONS } from '../../figures/lora-tally.js';
import { MAX_OFF_PLAN } from '../../figures/offered-arrivals.js';
import { PROMPT_EXACTNESS_DEFINITIONS } from '../../figures/prompt-exactness.js';
import { SESSION_DEFINITIONS } from '../../figures/session-turns.js';
import { SLO_VERDICT_DEFINITIONS } from '../../figures/slo-verdict.js';
import { TOOL_DEFINITIONS } from '../../figures/tool-tally.js';
import { SELF_TEST_DEFINITIONS } from '../../shared/self-test.js';
import { CACHE_RESET_DEFINITIONS } from '../cache-reset.js';
import { DRIFT_FIELD_DEFINITIONS } from '../clock/drift-fields.js';
import { HEADROOM_DEFINITIONS } from '../headroom/index.js';
import { RECOVERY_DEFINITIONS } from '../journal/recovery.js';
import { LOCAL_LAYOUT_DEFINITIONS } from '../local-layout.js';
import { EMBEDDINGS_DEFINITIONS, EXACT_METHOD_DEFINITIONS } from '../summary.js';
import { SERVER_SPANS_DEFINITIONS } from '../traces/definitions.js';

/** What run.json's `records` section says. */
const RECORDS_DEFINITION =
  "which request records reached the coordinator: every one, or with plan.records.sample_every a sample while each agent kept every record in its spool; sampled, the counts (requests, completed, failed, status and HTTP counts, tokens, throughput, slo_attainment, goodput, agents[].requests) are the agents' own counts of every request, percentiles come from the merged histograms of every request as always, and each SLO verdict's p95 is read from the merged histogram with the failed requests ranked +∞ (within the histogram's precision, 3 significant digits, instead of exact)";

/** One sentence for every other figure in run.json. */
export const FIELD_DEFINITIONS: Record<string, string> = {
  requests:
    'requests dispatched (every status), from the records the agents sent (with sampled records, records.sent "sampled", from the counts every agent kept of its own requests)',
  records: RECORDS_DEFINITION,
  'records.sent':
    '"all" when every request record reached the coordinator; "sampled" when the plan asked agents for a sample (plan.records.sample_every)',
  'records.sample_every':
    'K of plan.records.sample_every: an agent sent the record of a request when floor(request_index / agents) mod K = 0 (every K-th request of its share, its first included); null when every record was sent',
  'records.received': 'distinct request records the coordinator received (rows of requests.ndjson)',
  'records.figures_over_sample':
    'the run.json figures computed over the received records only when records are sampled (each over the sample, never scaled up)',
  'records.not_evaluable': 'figures that need every record and are null or not judged when records are sampled',
  completed: 'requests with status ok',
  failed: 'requests with any other status; they keep their row in requests.ndjson and stay out of latency distributions',
  status_counts: 'requests by HTTP status code ("none" when no response arrived)',
  error_counts:
    'failed requests by status (http_error, timeout, incomplete_stream, missing_usage, malformed_stream, connect_error, canary_failed, aborted)',
  'agents[].share': 'the fraction of the global schedule the agent owned; segment is its (from, to] of [0, 1]',
  'agents[].first_send_error_ns': 'how long after the shared start instant, on its own clock, the agent began sending',
  'agents[].prep_ms': 'how long the agent took to compute its stripe, build its prompts and touch the target before it was ready',
  'agents[].warm_up':
    "the agent's read-only GET {base_url}/models before the load, from where it runs: url, status (HTTP status, null when no answer came), error (why not: refused, DNS, TLS, a timeout), latency_ms; null from an agent that did not report one",
  'agents[].cpu_ms':
    'user + system CPU the agent process used from its start to its last heartbeat or final message (the whole process: when it served several agents, see process_agents, each reports the same process)',
  'agents[].schedule_lag_p99_ms': 'the agent own p99 of sent − intended over its open-loop requests',
  'agents[].event_loop_delay_p99_ms': 'the agent p99 of how late a 10 ms timer fired beyond its period during the run',
  'agents[].event_loop_utilization':
    "the share of the run's wall time the agent's event loop was busy (the worst thread's with --workers; a loop shared by every agent of its process, see process_agents); near 1 it had no headroom",
  'agents[].outages':
    'each time the agent link was down during the run: from_s and to_s in seconds after the start (coordinator clock), why, and whether it reconnected and resumed (true) or was lost when its grace ran out (false)',
  'agents[].status':
    'ok when the agent handed over its results (also after reconnecting), lost when it was not back within its grace or its process was stopped mid-run (SIGTERM: what it finished is kept, its share is short)',
  'intervals.duplicates':
    'agent intervals received a second time and dropped: after a reconnect an agent resends every interval the coordinator had not acknowledged, since a frame sent as its link died may never have arrived',
  'intervals.late':
    'agent intervals that arrived after their second had been written (beyond the lateness bound, --agent-grace-s + 2 s): counted in the records and run histograms, not written to the interval files',
  'agents[].recovered_from_spool':
    'requests a restarted process of a lost agent handed over from its spool that the coordinator did not have',
  duplicates_dropped: 'records that arrived a second time (a spool re-sent what had been received) and were not counted again',
  'intervals.contributors':
    'for each 1 s interval written to histograms.hlog and traffic.csv, the agent indices (order of agents[]) whose data it holds',
  wall_clock_ms: 'finished_at − started_at: from the shared start instant to the last request done',
  plan_sha256: 'SHA-256 of the plan as run (target resolved, prompt_calibration and prompt_vocabulary added), serialised as in this file',
  'plan.prompt_calibration':
    "per class, written by the coordinator before any load: the method, the filler words before (prefix_words) and after (words) the unique head, the pad words that top it up (pad_words), the whole request's prompt tokens as the target's tokenizer counted them (counted_prompt_tokens), the tokenize calls made (attempts) and a note on what answered",
  schedule_sha256:
    "SHA-256 of the global schedule the plan and seed define (every arrival time and concurrency step, and for classes whose requests differ each request's prompt and output tokens, dataset record and trace hash ids), the same for any number of agents",
  ...Object.fromEntries(Object.entries(SESSION_DEFINITIONS).map(([k, v]) => [`sessions.<class>.${k}`, v])),
  'workload_files[]':
    'each trace or dataset file the plan names, as read by the coordinator before the run (the agents got its parsed rows): class, kind, absolute path and the SHA-256 of its bytes',
  'workload_files[].rows_in_file': 'data rows (trace) or records (dataset) in the file, blank lines and the CSV header excluded',
  'workload_files[].rows_used':
    'rows replayed (after start_s, limit and the run duration; BurstGPT rows with 0 response tokens are never replayed) or records kept by the dataset length filters',
  offered_schedule_sha256: `the same hash recomputed from the intended times the agents actually dispatched; offered_schedule_matches says whether the two agree; null when more than ${MAX_OFF_PLAN} requests of a class were dispatched at a time other than the planned one (the coordinator keeps one bit per request dispatched on the plan and the time of at most that many others)`,
  'agents[].clock_anchor_uncertainty_ns':
    "half the width of the bracket that placed the agent's hrtime anchor on its wall clock: how far its clock may sit from the wall clock it read (the offsets already include it)",
  'clock.coordinator_anchor_uncertainty_ns': 'the same bound for the coordinator clock that every aligned time is mapped into',
  'agents[].ttft_uncertainty_p99_ms':
    "the p99 over the agent's successful requests of first_content_uncertainty_ns (see timing_methodology.ttft_uncertainty), in ms; null when its records do not carry it; an estimate, whose coverage this agent measured is self_test.uncertainty_coverage",
  'classes.<class>.ttft_uncertainty_p99_ms':
    "the same p99 over the class's successful requests from every agent: TTFT stamps may be late by about this much (p99): an estimate that misses the kernel's wake-up and time waiting for a CPU (client_health.ttft_uncertainty_coverage states its measured coverage)",
  'agents[].workers': "worker threads that striped the agent's share (agent --workers); its health figures are then the worst thread's",
  'agents[].rtt_ns': 'the round trip of the lowest-delay clock probe at join',
  ...DRIFT_FIELD_DEFINITIONS,
  'histograms.compared_values': 'how many merged-HDR figures were compared with exact nearest rank to give max_relative_error_vs_exact',
  ...EXACT_METHOD_DEFINITIONS,
  'intervals.written': 'how many 1 s intervals were written to histograms.hlog and traffic.csv',
  'metric_population.excluded_by_status': 'the excluded requests by status',
  ...CACHE_RESET_DEFINITIONS,
  ...RECOVERY_DEFINITIONS,
  ...LORA_DEFINITIONS,
  ...TOOL_DEFINITIONS,
  'metric_population.not_applicable':
    'per class whose API cannot have them, the latency metrics left out of its figures (absent, never zero) and why (an embeddings request has no first token)',
  ...Object.fromEntries(Object.entries(EMBEDDINGS_DEFINITIONS).map(([k, v]) => [`classes.<c>.windows.<w>.${k}`, v])),
  'metric_population.output_token_sources':
    'successful requests by where their completion_tokens came from (usage, tokenizer, chunks; see timing_methodology.output_token_source); only usage and tokenizer counts enter tpot, ntpot and decode_tok_s',
  'classes.<class>.output_token_sources': 'the same count for one class',
  'classes.<class>.prompt_length_method':
    "how the class's prompts were sized before any load: server-tokenize (the whole request counted by the target's tokenize endpoint), tokenizer-file (counted with the tokenizer file the plan names) or words-unverified (filler words, one per intended token, never counted); a class of identical requests is sized to input_tokens (plan.prompt_calibration holds the sizes and the count), a class whose requests differ is built per request from the target's one-token words (plan.prompt_vocabulary)",
  'classes.<class>.prompt_length_check':
    "before any load, a seeded sample of the class's real request bodies (all of them up to 48, and at most 524,288 planned tokens with at least one body, so long contexts stay bounded) counted on the target: sampled, exact (counted exactly their planned prompt tokens), exact_share, max_abs_difference (largest |counted − planned|) and unreachable (planned above the asked length because the fixed costs alone exceed it); null when nothing could count; sessions count each sampled session's first turn, or a later user message alone",
  ...PROMPT_EXACTNESS_DEFINITIONS,
  'classes.<class>.prompt_tokens_differ':
    'successful requests whose usage.prompt_tokens is not exactly their planned_prompt_tokens (requests.ndjson), and the largest difference; a session turn after the first holds replies the server re-tokenizes, so it is counted here but judged by request_shape within ±10%',
  'plan.prompt_vocabulary':
    "the target's token-exact vocabulary found before any load: words that each count one token after a space in running text, the opener that starts every message and its tokens, the tokens of an empty request (template, BOS) and of a further conversation turn's template, and the head's words",
  'plan.prompt_vocabularies':
    "present when the plan's per-request classes send to APIs counted differently (chat and responses with the chat template, completions and embeddings without): the vocabulary found on each API counted unlike the first per-request class's (plan.prompt_vocabulary holds that one), so each class's text is exact on its own API",
  'requests.ndjson <stamp>_local_ns':
    "written when alignment moved the row's times (measured-offsets): each stamp on the agent's run timeline (its own clock, as slewed) before the agent's offset was taken off; <stamp>_unix_ns = <stamp>_local_ns − agents[].start_offset_ns",
  'requests.ndjson clock_correction_ns':
    "how far the agent had slewed its run timeline back from its raw clock at the request's send (0 when it was never steered; null from older agents): sent_local_ns (sent_unix_ns in a row without it) + clock_correction_ns is the agent's raw clock reading at the send (intended_unix_ns is a schedule instant, not a reading)",
  'requests.ndjson clock_correction_done_ns':
    'the same correction at done_unix_ns (null without one); a stamp between send and done takes the correction interpolated linearly between the two in time: exact while the slew rate did not change during the request, else off by at most (highest − lowest rate during it) × duration / 4, and never more than 2.5 ms per second of request (the rate is capped at 5,000 ppm); the correction itself moves by at most 5 ms per second of request (in practice by the drift, e.g. 0.05 ms per second at 50 ppm)',
  'requests.ndjson planned_prompt_tokens':
    "the prompt tokens the request was built to count on the target (a class of identical requests: its calibrated count; a session's later turn: with each earlier reply counted as its asked length), beside prompt_tokens, the server's usage.prompt_tokens",
  request_canary_samples:
    'responses whose canary was checked: clean streams of classes with prompt.canary (each row of requests.ndjson carries its request_canary); per class in classes.<class> too',
  request_canary_passed:
    'of those, responses that began their visible output with their own marker and carried no other request marker (see timing_methodology.request_canaries); the rest have status canary_failed',
  'classes.<class>.calibrated_prompt_tokens':
    "the prompt tokens the target's tokenizer counted for one whole request of the class at calibration (null when words-unverified)",
  server:
    'what the coordinator scraped from the serving stack: capture health per source and the derived figures per window (each defined in server.definitions)',
  data_quality:
    'valid only when at least one named check applied and every check that applied passed (each with its evidence; not_evaluated — the check applies but its evidence is missing — never counts as a pass; not_applicable — the plan does not call for the check, its reason says why — leaves the gate alone; see data_quality.definitions)',
  slo_proof:
    'whether the SLO evaluation can be trusted (not whether the SLOs were met: attainment is evidence); valid only when at least one check applied and every check that applied passed (not_applicable checks leave it alone); see slo_proof.definitions',
  'data_quality.applied':
    'the names of the checks that applied to this run (status pass, fail or not_evaluated), in check order; slo_proof.applied likewise',
  'data_quality.not_applicable':
    'the checks the plan does not call for (no class sends a fairness header, nothing scraped, no cache claim to prove, no SLO declared), each with why; slo_proof.not_applicable likewise',
  experiment: 'the experiment, arm and repeat (from 1) this run belongs to; absent for a run outside an experiment',
  'classes.<c>.slo_verdict':
    'whether the class met its declared SLO, per window, with each criterion (the p95 of each bounded latency, the success rate) against its bound; present only for a class that declares an SLO; slo_proof says whether this verdict can be trusted',
  ...SLO_VERDICT_DEFINITIONS,
  ...HEADROOM_DEFINITIONS,
  ...CLIENT_HEALTH_DEFINITIONS,
  ...LOCAL_LAYOUT_DEFINITIONS,
  ...SERVER_SPANS_DEFINITIONS,
  ...Object.fromEntries(Object.entries(SELF_TEST_DEFINITIONS).map(([k, v]) => [`agents[].${k}`, v])),
  ...Object.fromEntries(Object.entries(GOODPUT_DEFINITIONS).map(([k, v]) => [`classes.<c>.windows.<w>.${k}`, v])),
};
