// The detector's vocabulary in one place: probe kinds and their traits, probe results, target states,
// diagnoses, log event classes and journal event types. Everything that names one (the config schema, the
// verdict, the pre-created metric series, the README and runbook checks) derives from these tables, so a new
// kind or diagnosis is one entry here and cannot be forgotten silently elsewhere. Pure data: imports nothing.

export const CONN_KINDS = ['fresh', 'keepalive'] as const;
export type ConnKind = (typeof CONN_KINDS)[number];

/** Which detect threshold a failing slot of the kind must reach before it counts as failing. */
export type FailAfter = 'wedgeAfter' | 'downAfter';

export interface ProbeKindTraits {
  /** Runs a completion through the engine: a finished one proves the engine is not stuck; it costs engine work. */
  readonly completion: boolean;
  /** A run in flight is judged before its timeout fires (hangAfter, confirmAfter, the TTFT objective). */
  readonly hangs: boolean;
  /** Run by a confirmation round after a critical log line. */
  readonly confirms: boolean;
  readonly failAfter: FailAfter;
  /** Its passes count towards recovery (recoverAfter); a failing one keeps a target from `ok` being clean. */
  readonly countsForRecovery: boolean;
}

export const PROBE_KINDS = {
  chat: { completion: true, hangs: true, confirms: true, failAfter: 'wedgeAfter', countsForRecovery: true },
  toolcall: {
    completion: true,
    hangs: true,
    confirms: false,
    failAfter: 'wedgeAfter',
    countsForRecovery: true,
  },
  health: {
    completion: false,
    hangs: false,
    confirms: false,
    failAfter: 'downAfter',
    countsForRecovery: true,
  },
  // The scheduler round trip: evidence of a hang, never of recovery (it answers while completions hang).
  serverinfo: {
    completion: false,
    hangs: false,
    confirms: false,
    failAfter: 'wedgeAfter',
    countsForRecovery: false,
  },
  canary: {
    completion: true,
    hangs: true,
    confirms: false,
    failAfter: 'wedgeAfter',
    countsForRecovery: true,
  },
  structured: {
    completion: true,
    hangs: true,
    confirms: false,
    failAfter: 'wedgeAfter',
    countsForRecovery: true,
  },
  // A long prompt, varied per run: engines that hang or crawl only past a context length. Its passes do not hold
  // recovery: it runs every 10 m in the reference configs (a real prefill each), and waiting for recoverAfter of them
  // after any outage kept a recovered target out of `ok` for 20 minutes; its own failures still name
  // long_context_failing, and one pass ends that.
  longinput: {
    completion: true,
    hangs: true,
    confirms: false,
    failAfter: 'wedgeAfter',
    countsForRecovery: false,
  },
  // `rounds` turns over one connection with a growing context: a hang or a TTFT that grows round by round.
  conversation: {
    completion: true,
    hangs: true,
    confirms: false,
    failAfter: 'wedgeAfter',
    countsForRecovery: true,
  },
} as const satisfies Record<string, ProbeKindTraits>;

export type ProbeKind = keyof typeof PROBE_KINDS;

/** The result classes of a probe run (the `result` label of wedgewatch_probes_total). */
export const PROBE_RESULTS = {
  ok: 'the run finished as expected',
  timeout: 'no answer (or no first token, or no end of stream) within the timeout',
  connect_error: 'the connection was refused or could not be opened',
  http_error: 'an HTTP status other than 2xx',
  bad_response: 'an answer that is not what the kind expects (no JSON, no choices, a failed check)',
  empty: 'a completion with no content',
  toolcall_leak:
    'tool-call markup in content, reasoning or tool-call fields instead of tool_calls, or a call under tool_choice none',
  wrong_output:
    'a wrong answer (canary, long input, conversation), output that breaks its schema (structured), text that is not the answer, or streamed tool-call arguments that do not reassemble',
  reasoning_runaway:
    'a known-answer reply that does not stop thinking: `</think>` again and again, reasoning after the answer to max_tokens, or one phrase looped to max_tokens',
  skipped_overlap: 'not run: the previous run of the slot was still in flight',
} as const;
export type ProbeResultClass = keyof typeof PROBE_RESULTS;

/** Target states, best first (the order is the ranking the hysteresis uses, unknown aside). */
export const TARGET_STATES = ['unknown', 'ok', 'degraded', 'wedged', 'down'] as const;
export type TargetStateName = (typeof TARGET_STATES)[number];

/**
 * What a diagnosis is named from, strongest first: the order in which evidence tells an operator where to look.
 * Within one incident the diagnosis holds until evidence of a stronger kind arrives (core/reduce/incident.ts);
 * equal or weaker evidence never replaces it, so the label a person reads at 3 a.m. does not flap.
 */
export const EVIDENCE = {
  signature: 'a critical log line, confirmed by a failing or hung completion: it names the failure itself',
  counter: "the engine's own failure counters rising (KV transfers failed, workers unhealthy)",
  engine:
    "the engine's own state, measured: no progress, a crawl, one rank stalled, its health check failing",
  router:
    'the router holds requests no engine works on, or shuts out (open circuit, unhealthy) workers that answer directly',
  answer: 'answers finish but are wrong: a canary, a schema',
  path: 'one part of the path fails while the rest passes: a hop, reused connections, one request shape',
  warning:
    'a warning-class log line on the target since it was last ok, promoted because probes fail or hang',
  pattern: 'failures that come and go over a window of runs: more than one streak says',
  failing:
    'completions hung (in flight `hangAfter`, none finished since) or failing, health or ports failing, with nothing more specific',
  format:
    'answers finish in the wrong shape: tool-call markup in the content or the reasoning, reasoning that never stops',
  load: 'answers finish, late or aborted in numbers',
} as const;
export type EvidenceKind = keyof typeof EVIDENCE;
export const EVIDENCE_KINDS = Object.keys(EVIDENCE) as EvidenceKind[];

export interface DiagnosisEntry {
  readonly states: readonly TargetStateName[];
  /** The kind of evidence it is named from (EVIDENCE, strongest first). */
  readonly evidence: EvidenceKind;
  /** How specific the evidence is: the verdict names the highest-ranked critical evidence (a user rule ranks 1). */
  readonly rank: number;
  /** The anchor of its section in docs/runbooks.md. */
  readonly runbook: string;
  /** The alert (alerts/wedgewatch.rules.yml) that pages or warns for it. */
  readonly alert: string;
  readonly meaning: string;
}

/** Diagnoses named in full. */
export const DIAGNOSES = {
  kv_bootstrap_thread_dead: {
    states: ['wedged'],
    evidence: 'signature',
    rank: 3,
    runbook: 'wedgewatchkvbootstrapthreaddead',
    alert: 'WedgewatchKVBootstrapThreadDead',
    meaning:
      'the NIXL/Mooncake bootstrap thread traceback, confirmed by a completion failing or still in flight `confirmAfter` (5 s) after it',
  },
  completions_hung: {
    states: ['wedged'],
    evidence: 'failing',
    rank: 3,
    runbook: 'diagnosis-completions_hung',
    alert: 'WedgewatchTargetWedged',
    meaning:
      'a completion in flight `hangAfter` (20 s) with none finished since it started, on any hop; no log line named a cause',
  },
  health_generate_failing: {
    states: ['wedged'],
    evidence: 'engine',
    // Above the other engine evidence: the engine's own health check says it, where a stall is read from gauges
    // (which one a round sees first depends on the probes' phase; the incident holds the first of equals).
    rank: 4,
    runbook: 'diagnosis-health_generate_failing',
    alert: 'WedgewatchTargetWedged',
    meaning:
      "the engine's `/health` answers 503 (or not in time while a probe or metrics scrape still gets answers) on an open port while completions fail (SGLang: detokenizer heartbeat stopped)",
  },
  engine_stalled: {
    states: ['wedged', 'degraded'],
    evidence: 'engine',
    rank: 3,
    runbook: 'wedgewatchenginestalled',
    alert: 'WedgewatchEngineStalled',
    meaning:
      "running or queued requests with no progress for `stallAfter`; or, whatever the gauges claim, no progress of the engine's own (token counters, throughput, progress lines) while a completion hangs, for more than `hangAfter` plus three reading intervals, with its scrapes failing, its periodic line stopped or its gauges frozen",
  },
  requests_lost: {
    states: ['degraded', 'wedged'],
    evidence: 'engine',
    rank: 3,
    runbook: 'diagnosis-requests_lost',
    alert: 'WedgewatchTargetDegraded',
    meaning:
      'a plain completion of ours in flight at the innermost hop, no token, while every engine reports nothing running and nothing waiting across two readings, longer than their reading interval plus 5 s, and every engine made tokens since it started (held 5 min)',
  },
  completions_failing: {
    states: ['wedged', 'degraded'],
    evidence: 'failing',
    rank: 3,
    runbook: 'wedgewatchtargetwedged',
    alert: 'WedgewatchTargetWedged',
    meaning: '`wedgeAfter` failed completions in a row on every hop (or on some)',
  },
  router_stuck: {
    states: ['wedged'],
    evidence: 'router',
    rank: 3,
    runbook: 'diagnosis-router_stuck',
    alert: 'WedgewatchTargetWedged',
    meaning:
      "the router's in-flight requests (`smg_http_inflight_request_age_count`) above zero for `stallAfter` while every engine runs and queues nothing, and completions hang (router `/metrics` in `engines:`)",
  },
  router_circuit_open: {
    states: ['wedged', 'degraded'],
    evidence: 'router',
    rank: 3,
    runbook: 'diagnosis-router_circuit_open',
    alert: 'WedgewatchTargetWedged',
    meaning:
      'the router holds worker circuit breakers open (`smg_worker_cb_state` 1) and completions through it fail or hang, while every engine behind it answers its own direct probes and its /metrics (router `/metrics` in `engines:`, the engines probed by name)',
  },
  router_workers_unhealthy: {
    states: ['wedged', 'degraded'],
    evidence: 'router',
    rank: 3,
    runbook: 'diagnosis-router_workers_unhealthy',
    alert: 'WedgewatchTargetWedged',
    meaning:
      "the router's health checker marks workers unhealthy (`smg_worker_health` 0) and completions through it fail or hang, while every engine behind it answers its own direct probes and its /metrics",
  },
  intermittent: {
    states: ['degraded', 'wedged'],
    evidence: 'pattern',
    rank: 3,
    runbook: 'wedgewatchintermittentfailures',
    alert: 'WedgewatchIntermittentFailures',
    meaning:
      "`intermittentFailures` (3) of a completion slot's last `intermittentWindow` (10) runs within 10 minutes failed, in two or more separate episodes (one solid streak is a wedge, not this); wedged when most runs fail on every slot",
  },
  stalls_recurring: {
    states: ['degraded', 'wedged'],
    evidence: 'pattern',
    rank: 3,
    runbook: 'diagnosis-stalls_recurring',
    alert: 'WedgewatchTargetDegraded',
    meaning:
      "3 separate completions within 5 min far outside their slot's own latency (5× its median, 2× its slowest normal run, and 2 s over the median) that each cleared: stalls that end by themselves (wedged while one holds)",
  },
  rank_stalled: {
    states: ['degraded'],
    evidence: 'engine',
    rank: 3,
    runbook: 'wedgewatchrankstalled',
    alert: 'WedgewatchRankStalled',
    meaning:
      'one data-parallel rank holds running requests with no tokens for `stallAfter` while a sibling produces them (vLLM per-engine stats lines and metrics); the cause names the rank',
  },
  queue_leak: {
    states: ['degraded'],
    evidence: 'engine',
    rank: 3,
    runbook: 'wedgewatchqueueleak',
    alert: 'WedgewatchQueueLeak',
    meaning:
      'PD bootstrap/prealloc/transfer queues above zero for `leakAfter` (10 m) while completions pass: their floor never reached zero, whether the engine ran nothing or served traffic',
  },
  health_failing: {
    states: ['down', 'degraded'],
    evidence: 'failing',
    rank: 3,
    runbook: 'wedgewatchtargetdown',
    alert: 'WedgewatchTargetDown',
    meaning:
      'health fails with no completion probe configured (a live server answering 503 is degraded or wedged); degraded while completions pass',
  },
  connection_refused: {
    states: ['down'],
    evidence: 'failing',
    rank: 3,
    runbook: 'wedgewatchtargetdown',
    alert: 'WedgewatchTargetDown',
    meaning: 'a probed port refuses connections `downAfter` times in a row and no hop behind it passes',
  },
  keepalive_only: {
    states: ['degraded'],
    evidence: 'path',
    rank: 3,
    runbook: 'wedgewatchkeepaliveonlyfailures',
    alert: 'WedgewatchKeepaliveOnlyFailures',
    meaning: 'completions fail on reused keep-alive connections while fresh ones to the same hop pass',
  },
  slow: {
    states: ['degraded'],
    evidence: 'load',
    rank: 3,
    runbook: 'wedgewatchttftoverobjective',
    alert: 'WedgewatchTTFTOverObjective',
    meaning:
      'first token past `ttftObjective` `wedgeAfter` runs in a row (a run still in flight past it counts)',
  },
  toolcall_leak: {
    states: ['degraded'],
    evidence: 'format',
    rank: 3,
    runbook: 'wedgewatchtoolcallleak',
    alert: 'WedgewatchToolCallLeak',
    meaning:
      "tool-call markup (a whole call, or an orphan or unbalanced tag) in the content, the reasoning or a tool call's name or arguments instead of `tool_calls`, or a tool call where `tool_choice: none` forbids one",
  },
  reasoning_runaway: {
    states: ['degraded'],
    evidence: 'format',
    rank: 3,
    runbook: 'diagnosis-reasoning_runaway',
    alert: 'WedgewatchTargetDegraded',
    meaning:
      'a known-answer probe (canary, long input, conversation) finished but the model did not stop thinking: `</think>` twice or more in content, reasoning after its answer to max_tokens, or one phrase repeated to max_tokens; the model or its chat template loops, and more `maxTokens` would not end it',
  },
  engine_saturated: {
    states: ['degraded'],
    evidence: 'load',
    // Above `slow`: it says why the first token is late.
    rank: 4,
    runbook: 'diagnosis-engine_saturated',
    alert: 'WedgewatchTargetDegraded',
    meaning:
      'completions hang or time out while an engine makes tokens with requests running and waiting: busy, never wedged (no remediation)',
  },
  abort_storm: {
    states: ['degraded'],
    evidence: 'load',
    rank: 3,
    runbook: 'wedgewatchabortstorm',
    alert: 'WedgewatchAbortStorm',
    meaning:
      "`abortStormCount` abort lines within `abortStormWindow`, or as many aborts in the engine's own counters within `failureWindow` beyond our own timed-out probes'",
  },
  wrong_output: {
    states: ['degraded'],
    evidence: 'answer',
    rank: 3,
    runbook: 'wedgewatchwrongoutput',
    alert: 'WedgewatchWrongOutput',
    meaning: 'a canary got a wrong known answer, or a structured probe output that breaks its schema',
  },
  canary_never_passed: {
    states: ['degraded'],
    evidence: 'answer',
    rank: 3,
    runbook: 'diagnosis-canary_never_passed',
    alert: 'WedgewatchWrongOutput',
    meaning:
      'a canary that has not answered right once since wedgewatch started answers wrong: the model may never pass it (small or quirky), or the deployment answered wrong from the start',
  },
  kv_transfer_failing: {
    states: ['degraded', 'wedged'],
    evidence: 'counter',
    rank: 3,
    runbook: 'wedgewatchkvtransferfailing',
    alert: 'WedgewatchKVTransferFailing',
    meaning:
      "the engine's own KV-transfer failure counters (SGLang bootstrap/transfer failed, vLLM NIXL failed or expired, the router's PD KV failures) rose `failureCount` (3) times within `failureWindow` (60 s); wedged when completions fail or hang too",
  },
  engine_crawling: {
    states: ['degraded', 'wedged'],
    evidence: 'engine',
    rank: 3,
    runbook: 'wedgewatchenginecrawling',
    alert: 'WedgewatchEngineCrawling',
    meaning:
      "tokens per second per running request (vLLM: from its inter-token latency histogram) below `crawlFraction` (10 %) of the engine's (or rank's) own trailing baseline for `stallAfter`, with requests running; wedged when completions fail or hang too",
  },
  engine_slow: {
    states: ['degraded', 'wedged'],
    evidence: 'engine',
    rank: 2,
    runbook: 'diagnosis-engine_slow',
    alert: 'WedgewatchTargetDegraded',
    meaning:
      "the engine's inter-token latency over its objective (`objectives.interTokenLatency`, else 1.5× its first healthy window, never learned above 250 ms) for `stallAfter`, across probe runs: a uniform slowdown, or a crawl with no healthy past; wedged when completions fail or hang too",
  },
  queue_starved: {
    states: ['degraded', 'wedged'],
    evidence: 'engine',
    rank: 3,
    runbook: 'diagnosis-queue_starved',
    alert: 'WedgewatchTargetDegraded',
    meaning:
      'the engine reports queued requests without a break for `hangAfter` (and twice its queue-time objective) while requests finish and tokens move, and those that left its queue (vLLM `vllm:request_queue_time_seconds`, SGLang `sglang:queue_time_seconds`) waited under the objective: the queue does not admit (a cache tier, a full KV pool); wedged when completions fail or hang too',
  },
  requests_orphaned: {
    states: ['degraded'],
    evidence: 'router',
    rank: 3,
    runbook: 'wedgewatchrequestsorphaned',
    alert: 'WedgewatchRequestsOrphaned',
    meaning:
      "the router's oldest request in flight (`smg_http_inflight_request_age_count`) older than `orphanAfter` (10 m) while completions pass: requests nothing is finishing",
  },
  pd_pair_half_failed: {
    states: ['wedged'],
    evidence: 'router',
    rank: 3,
    runbook: 'diagnosis-pd_pair_half_failed',
    alert: 'WedgewatchTargetWedged',
    meaning:
      'the router holds requests (in flight within `stallAfter`/`hangAfter`) while one PD leg is down or refusing (its scrape or probes fail) and the other is up, and completions fail or hang; the cause names both legs',
  },
  structured_output_stalled: {
    states: ['degraded'],
    evidence: 'path',
    rank: 3,
    runbook: 'diagnosis-structured_output_stalled',
    alert: 'WedgewatchTargetDegraded',
    meaning:
      'structured-output probes fail `wedgeAfter` times in a row while completions without a `response_format` pass: the grammar backend, not the engine',
  },
  long_context_failing: {
    states: ['degraded'],
    evidence: 'path',
    rank: 3,
    runbook: 'wedgewatchlongcontextfailing',
    alert: 'WedgewatchLongContextFailing',
    meaning:
      'long-input probes (a prompt of `promptTokens`, named in the cause) fail or hang `wedgeAfter` times in a row while short completions pass: prefill, chunked prefill or a KV transfer of many blocks, past a length',
  },
  conversation_stalls: {
    states: ['degraded'],
    evidence: 'path',
    rank: 3,
    runbook: 'wedgewatchconversationstalls',
    alert: 'WedgewatchConversationStalls',
    meaning:
      'a conversation of rounds over one keep-alive connection hangs, or its time to first token grows past `ttftGrowth` × round 1, `wedgeAfter` runs in a row while single completions pass; the cause names the round',
  },
  // What the node tells us (issue 42): each names a diagnosis only where probes already fail; ranked above the
  // engine's gauges, as the thing that stopped is more specific than the work that stopped with it.
  gpu_fault: {
    states: ['wedged', 'degraded'],
    evidence: 'engine',
    // Above a lost thread or a missing rank: a GPU that faulted explains both.
    rank: 6,
    runbook: 'diagnosis-gpu_fault',
    alert: 'WedgewatchNodeFault',
    meaning:
      'a GPU reported a new XID (dcgm-exporter `DCGM_FI_DEV_XID_ERRORS`) since the target was last ok, while completions fail, hang or an engine stalls; the cause names the GPU and what the XID means',
  },
  thread_lost: {
    states: ['wedged', 'degraded'],
    evidence: 'engine',
    rank: 5,
    runbook: 'diagnosis-thread_lost',
    alert: 'WedgewatchNodeFault',
    meaning:
      'a thread of an engine process (`node.processes`) went away while its process lives on, since the target was last ok, and completions fail, hang or an engine stalls; the cause names the thread and when it went relative to the first failing probe',
  },
  process_stopped: {
    states: ['wedged', 'degraded'],
    evidence: 'engine',
    rank: 5,
    runbook: 'diagnosis-process_stopped',
    alert: 'WedgewatchNodeFault',
    meaning:
      'an engine process is stopped (T) or in uninterruptible sleep (D) for `hangAfter`, or exited unreaped (zombie), while completions fail, hang or an engine stalls',
  },
  rank_missing: {
    states: ['wedged', 'degraded'],
    evidence: 'engine',
    rank: 5,
    runbook: 'diagnosis-rank_missing',
    alert: 'WedgewatchNodeFault',
    meaning:
      "NCCL's RAS (`node.nccl`) reports a rank dead or unreachable, or ranks behind on a collective whose counts no longer move, while completions fail, hang or an engine stalls",
  },
} as const satisfies Record<string, DiagnosisEntry>;

/** Diagnoses with a variable part: the prefix, its placeholder in the docs, and the same traits. */
export const DIAGNOSIS_TEMPLATES = {
  'hop:': {
    placeholder: 'hop:<name>',
    states: ['degraded'],
    evidence: 'path',
    rank: 3,
    runbook: 'wedgewatchtargetdegraded',
    alert: 'WedgewatchTargetDegraded',
    meaning:
      "completions (or health) fail on that hop only (proxy, router) while the hops behind it pass: that hop's problem",
  },
  'warning:': {
    placeholder: 'warning:<class>',
    states: ['wedged', 'degraded'],
    evidence: 'warning',
    rank: 2,
    runbook: 'diagnosis-warningclass',
    alert: 'WedgewatchTargetWedged',
    meaning:
      'probes confirm a wedge or a degradation, no critical line names it, and a built-in warning of that class (`transfer_timeout`, `shm_hang`, `connection_lost`, …) was logged on the target since it was last ok',
  },
  'log:': {
    placeholder: 'log:<rule>',
    states: ['wedged'],
    evidence: 'signature',
    rank: 2,
    runbook: 'wedgewatchtargetwedged',
    alert: 'WedgewatchTargetWedged',
    meaning:
      "a critical built-in rule other than the bootstrap thread death (or, ranked below it, the user's own), confirmed by a failing or hung completion",
  },
} as const satisfies Record<string, DiagnosisEntry & { placeholder: string }>;

export type NamedDiagnosis = keyof typeof DIAGNOSES;
export type Diagnosis = NamedDiagnosis | `hop:${string}` | `log:${string}` | `warning:${LogEventClass}`;

/** The evidence rank of a user rule's diagnosis: below every built-in one. */
export const USER_RULE_RANK = 1;

export interface LogClassEntry {
  readonly meaning: string;
  /** A critical event of this class names this diagnosis (else `log:<rule>`). */
  readonly diagnosis?: NamedDiagnosis;
  /** An event of this class is a request abort (the abort storm counts them). */
  readonly abort?: boolean;
  /**
   * A warning of this class names an incident the probes confirm when no critical line does
   * (`warning:<class>`): it says what failed, where a probe only says that something did.
   */
  readonly names?: boolean;
}

/**
 * What a matched log line means, as a bounded label (the `class` of wedgewatch_log_events_total): alerts and
 * the classifier select on it, never on rule names. One class per consequence, not per wording.
 */
export const LOG_EVENT_CLASSES = {
  kv_bootstrap_dead: {
    meaning: 'the PD bootstrap thread died: no new request gets its KV cache (wedge)',
    diagnosis: 'kv_bootstrap_thread_dead',
  },
  thread_death: { meaning: 'some other worker thread died; the process lives on', names: true },
  engine_death: {
    meaning: 'a scheduler/manager/engine-core process or the whole server died or is being killed',
    names: true,
  },
  watchdog_timeout: {
    meaning: 'an engine watchdog fired (soft: a dump; hard: it kills the server)',
    names: true,
  },
  collective_timeout: { meaning: 'NCCL/gloo collective timed out (a rank hung)', names: true },
  shm_hang: {
    meaning: 'vLLM shared-memory broadcast found no free block: a process is hanging',
    names: true,
  },
  abort: { meaning: 'a request was aborted (client disconnect, AbortReq)', abort: true },
  transfer_failure: { meaning: "one request's KV transfer or handshake failed", names: true },
  transfer_timeout: { meaning: 'a request timed out waiting for bootstrap or KV transfer', names: true },
  // A cache tier that is down repeats its line every few seconds (LMCache pings every 30 s, reconnects every 10 s):
  // it would name every unrelated incident on the target, and requests only miss it and recompute.
  cache_tier_unavailable: {
    meaning:
      "a KV cache tier (LMCache's L2 or remote store) failed a store or is unreachable: lookups miss and recompute",
  },
  connection_lost: { meaning: 'the decode side lost the prefill bootstrap server', names: true },
  // Retractions are routine under load: circumstantial next to any incident, so they name none.
  retract: { meaning: 'KV cache pool full: requests retracted (memory pressure)' },
  oom: { meaning: 'out of device memory', names: true },
  // A user's schema or a model steered into broken markup raises these at will: they name no incident.
  grammar: { meaning: 'structured-output grammar failed to advance' },
  tool_call_parse_error: { meaning: 'a tool-call parser failed and returned raw markup' },
  health_check_failed: { meaning: "the engine's own health check failed", names: true },
  corruption: { meaning: 'the engine detected corrupted state', names: true },
  memory_invariant: {
    meaning: "an engine's own memory-pool invariant check failed (a KV/request pool leak, a double free)",
    names: true,
  },
  // Issue 40: classes for what the new engines' packs read.
  engine_error: {
    meaning:
      'the engine failed a batch or a step with an error of its own and serves on (its requests got the error)',
    names: true,
  },
  no_workers: {
    meaning:
      'a gateway or frontend has no worker to send a request to (all circuits open, none registered): every request fails',
    names: true,
  },
  gpu_error: {
    meaning:
      'a sticky GPU or collective error (illegal memory access, ECC, device assert, NCCL): the process cannot use the device again',
    names: true,
  },
  wrong_kv: {
    meaning: "the engine found it was given another request's KV cache: answers are garbage while it lasts",
    names: true,
  },
  // Printed just before a death that is its own event (with its exception): circumstantial, names none.
  engine_dump: {
    meaning: 'an engine dumped its state before dying or being killed (the death is its own event)',
  },
  startup_info: { meaning: 'informational startup markers' },
  custom: { meaning: "a user rule's line that declares no class of its own" },
} as const satisfies Record<string, LogClassEntry>;

export type LogEventClass = keyof typeof LOG_EVENT_CLASSES;
/** The classes a built-in pack rule may declare (`custom` is the user rules' default only). */
export type RuleClass = Exclude<LogEventClass, 'custom'>;

/** The `type` of an events-journal entry. */
export const JOURNAL_EVENT_TYPES = [
  'transition',
  'diagnosis',
  'critical_log',
  'critical_confirmed',
  'critical_unconfirmed',
  'probe_failing',
  'probe_recovered',
  'engine_stalled',
  'engine_progress',
  'rank_stalled',
  'engine_crawling',
  'node',
  'confirm',
  'remediation',
  'remediation_pause',
  'file_change',
  'incident',
  // The traffic path (issue 43): a worker taken out of its gateway, and put back.
  'drain',
  'undrain',
] as const;
export type JournalEventType = (typeof JOURNAL_EVENT_TYPES)[number];

/** The whole vocabulary: the derivations take it as an argument, so a test can extend it. */
export interface Vocabulary {
  readonly probeKinds: Readonly<Record<string, ProbeKindTraits>>;
  readonly probeResults: Readonly<Record<string, string>>;
  readonly targetStates: readonly string[];
  readonly diagnoses: Readonly<Record<string, DiagnosisEntry>>;
  readonly diagnosisTemplates: Readonly<Record<string, DiagnosisEntry & { placeholder: string }>>;
  readonly logEventClasses: Readonly<Record<string, LogClassEntry>>;
}

export const VOCABULARY = {
  probeKinds: PROBE_KINDS,
  probeResults: PROBE_RESULTS,
  targetStates: TARGET_STATES,
  diagnoses: DIAGNOSES,
  diagnosisTemplates: DIAGNOSIS_TEMPLATES,
  logEventClasses: LOG_EVENT_CLASSES,
} as const satisfies Vocabulary;

// Derivations (pure functions of a vocabulary).

const keys = <K extends string>(o: Readonly<Record<K, unknown>>): K[] => Object.keys(o) as K[];

export const probeKindNames = (v: Vocabulary = VOCABULARY): string[] => keys(v.probeKinds);
export const probeResultNames = (v: Vocabulary = VOCABULARY): string[] => keys(v.probeResults);

/** The probe kinds that run a completion. */
export const completionKinds = (v: Vocabulary = VOCABULARY): string[] =>
  keys(v.probeKinds).filter((k) => v.probeKinds[k]!.completion);

/** Whether a probe kind runs a completion through the engine (unknown or absent kinds do not). */
export function isCompletion(kind: string | undefined, v: Vocabulary = VOCABULARY): boolean {
  return kind !== undefined && Object.hasOwn(v.probeKinds, kind) && v.probeKinds[kind]!.completion;
}

/** Whether a run of this kind in flight is judged before its timeout. */
export function hangs(kind: string | undefined, v: Vocabulary = VOCABULARY): boolean {
  return kind !== undefined && Object.hasOwn(v.probeKinds, kind) && v.probeKinds[kind]!.hangs;
}

/** The kinds a confirmation round runs. */
export const confirmingKinds = (v: Vocabulary = VOCABULARY): string[] =>
  keys(v.probeKinds).filter((k) => v.probeKinds[k]!.confirms);

export function countsForRecovery(kind: string, v: Vocabulary = VOCABULARY): boolean {
  return !Object.hasOwn(v.probeKinds, kind) || v.probeKinds[kind]!.countsForRecovery;
}

/**
 * The completion slots whose passes show a recovery: those whose kind counts for recovery, or every completion slot
 * when none does (a target probed only by long-input still recovers by its passes). The verdict (symptoms.ts, when a
 * confirmed line is spent) and the hysteresis (reduce/hysteresis.ts, when it clears the line) must use the same
 * list: with the hysteresis counting long-input too, a pass of it from before the line kept the spent line on the
 * degraded target, and the next single failure re-wedged it with the old diagnosis.
 */
export function recoverySlots<T extends { probeKind: string }>(
  slots: readonly T[],
  v: Vocabulary = VOCABULARY,
): T[] {
  const completion = slots.filter((m) => isCompletion(m.probeKind, v));
  const counted = completion.filter((m) => countsForRecovery(m.probeKind, v));
  return counted.length > 0 ? counted : completion;
}

/** The failure streak at which a slot of `kind` counts as failing. */
export function failThreshold(
  kind: string,
  d: Readonly<Record<FailAfter, number>>,
  v: Vocabulary = VOCABULARY,
): number {
  return d[Object.hasOwn(v.probeKinds, kind) ? v.probeKinds[kind]!.failAfter : 'wedgeAfter'];
}

/** The diagnoses a wedge can name in full (the pre-created `cause` series of wedgewatch_wedges_total). */
export const wedgeCauses = (v: Vocabulary = VOCABULARY): string[] =>
  keys(v.diagnoses).filter((d) => v.diagnoses[d]!.states.includes('wedged'));

/** The entry of a diagnosis, named or from a template; undefined when the vocabulary has none. */
export function diagnosisEntry(name: string, v: Vocabulary = VOCABULARY): DiagnosisEntry | undefined {
  if (Object.hasOwn(v.diagnoses, name)) return v.diagnoses[name];
  for (const [prefix, t] of Object.entries(v.diagnosisTemplates))
    if (name.startsWith(prefix) && name.length > prefix.length) return t;
  return undefined;
}

/** Whether a text names a state or a diagnosis of the vocabulary (config fields such as incidents.on). */
export function isStateOrDiagnosis(name: string, v: Vocabulary = VOCABULARY): boolean {
  return v.targetStates.includes(name) || diagnosisEntry(name, v) !== undefined;
}

/** The names the docs list: named diagnoses, then each template's placeholder. */
export function documentedDiagnosisNames(v: Vocabulary = VOCABULARY): string[] {
  return [...keys(v.diagnoses), ...Object.values(v.diagnosisTemplates).map((t) => t.placeholder)];
}

/** The entry the docs list under a name (a diagnosis or a template placeholder). */
export function documentedDiagnosis(name: string, v: Vocabulary = VOCABULARY): DiagnosisEntry | undefined {
  if (Object.hasOwn(v.diagnoses, name)) return v.diagnoses[name];
  return Object.values(v.diagnosisTemplates).find((t) => t.placeholder === name);
}
