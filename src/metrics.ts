// Every metric wedgewatch exports. This file is the contract with dashboards/ and alerts/: a test
// checks that every name they use is declared here, so nothing else may invent a metric name.
import client from 'prom-client';
import { collectRuntimeMetrics } from './metrics-runtime.js';
import { WRONG_HOLD_MS, WRONG_WINDOW } from './core/wrong-window.js';
import { BUILD, VERSION } from './version.js';

export const PREFIX = 'wedgewatch_';

// 50 ms … 120 s: a chat probe on a healthy engine takes a fraction of a second, a wedged one runs to its timeout.
export const PROBE_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120];

// The states are the vocabulary's (src/core/vocabulary.ts); one gauge series per state.

// `kind` (chat, toolcall, health, …) lets alerts tell completion probes from health checks by label.
const PROBE_LABELS = ['target', 'probe', 'endpoint', 'conn', 'kind'] as const;

/**
 * Registers a metric that carries exemplars. prom-client refuses exemplars on a text-format registry at
 * construction, yet renders them only in OpenMetrics and drops them in the text format: the daemon's registry
 * stays text (the default scrape format) and /metrics renders it as OpenMetrics on request (server/exposition.ts).
 */
function registered<M extends client.Metric>(registry: client.Registry, metric: M): M {
  registry.registerMetric(metric);
  return metric;
}

/** Probe families alone: /probe builds them on a throwaway registry, blackbox_exporter style. */
export function createProbeMetrics(registry: client.Registry) {
  const registers = [registry];
  return {
    probeSuccess: new client.Gauge({
      name: `${PREFIX}probe_success`,
      help: 'Whether the last run of the probe succeeded (1) or not (0).',
      labelNames: PROBE_LABELS,
      registers,
    }),
    probeDuration: registered(
      registry,
      new client.Histogram({
        name: `${PREFIX}probe_duration_seconds`,
        help: 'Wall time of a probe, from connect to the end of the response.',
        labelNames: PROBE_LABELS,
        buckets: PROBE_BUCKETS,
        enableExemplars: true,
        registers: [],
      }),
    ),
    probeFailureDuration: registered(
      registry,
      new client.Histogram({
        name: `${PREFIX}probe_failure_duration_seconds`,
        help: 'Time from the start of a failed probe run to its failure (timeout, error, bad answer).',
        labelNames: PROBE_LABELS,
        buckets: PROBE_BUCKETS,
        enableExemplars: true,
        registers: [],
      }),
    ),
    probeTtft: registered(
      registry,
      new client.Histogram({
        name: `${PREFIX}probe_ttft_seconds`,
        help: 'Time from sending a chat probe to its first content token.',
        labelNames: PROBE_LABELS,
        buckets: PROBE_BUCKETS,
        enableExemplars: true,
        registers: [],
      }),
    ),
    probeRoundTtft: new client.Gauge({
      name: `${PREFIX}probe_round_ttft_seconds`,
      help: "Time to first token of each round of the conversation probe's last run (label round, 1-based): growth with the context shows here.",
      labelNames: [...PROBE_LABELS, 'round'],
      registers,
    }),
    probeTokensPerSecond: new client.Gauge({
      name: `${PREFIX}probe_tokens_per_second`,
      help: 'Generated tokens per second of the last successful chat probe, after the first token.',
      labelNames: PROBE_LABELS,
      registers,
    }),
    probesTotal: new client.Counter({
      name: `${PREFIX}probes_total`,
      help: 'Probe runs by result class.',
      labelNames: [...PROBE_LABELS, 'result'],
      registers,
    }),
    probeInflight: new client.Gauge({
      name: `${PREFIX}probe_inflight_seconds`,
      help: 'Age of the probe run in flight, 0 when none is: a hang shows here before the timeout fires.',
      labelNames: PROBE_LABELS,
      registers,
    }),
    schedulerTick: new client.Gauge({
      name: `${PREFIX}scheduler_last_tick_timestamp_seconds`,
      help: "Unix time the target's probe scheduler last planned a round.",
      labelNames: ['target'],
      registers,
    }),
    // The heartbeat as a counter: alerts judge `increase(...[window]) == 0`, which no scrape/evaluation phase can
    // trip, where `time() - last_tick` counts the scrape's own age as lateness (docs/decisions.md, issue 26).
    schedulerRounds: new client.Counter({
      name: `${PREFIX}scheduler_rounds_total`,
      help: "Rounds the target's probe scheduler has planned (its heartbeat as a counter).",
      labelNames: ['target'],
      registers,
    }),
    schedulerInterval: new client.Gauge({
      name: `${PREFIX}scheduler_tick_interval_seconds`,
      help: "Longest expected time between two rounds of the target's probe scheduler (its shortest probe interval).",
      labelNames: ['target'],
      registers,
    }),
    probeLastRun: new client.Gauge({
      name: `${PREFIX}probe_last_run_timestamp_seconds`,
      help: 'Unix time the probe last finished.',
      labelNames: PROBE_LABELS,
      registers,
    }),
  };
}

export function createLogMetrics(registry: client.Registry) {
  const registers = [registry];
  return {
    logEvents: new client.Counter({
      name: `${PREFIX}log_events_total`,
      help: 'Log lines that matched a rule.',
      labelNames: ['target', 'service', 'rule', 'class', 'severity'],
      registers,
    }),
    logEventsFolded: new client.Counter({
      name: `${PREFIX}log_events_folded_total`,
      help: 'Log events folded into their burst (same source, class and severity within 10 s, past its first 32 events): counted, not raised.',
      labelNames: ['target', 'service', 'class'],
      registers,
    }),
    logMatches: new client.Counter({
      name: `${PREFIX}log_matches_total`,
      help: "Lines that matched a rule, each one: an incident's members and a request's repeats too (log_events_total counts the events they make).",
      labelNames: ['target', 'service', 'rule'],
      registers,
    }),
    logDecodeErrors: new client.Counter({
      name: `${PREFIX}log_decode_errors_total`,
      help: 'Lines not in the structured format the source declares (json, logfmt): matched as plain text.',
      labelNames: ['target', 'service', 'format'],
      registers,
    }),
    logLastEvent: new client.Gauge({
      name: `${PREFIX}log_last_event_timestamp_seconds`,
      help: 'Unix time a rule last matched.',
      labelNames: ['target', 'service', 'rule', 'class'],
      registers,
    }),
    logLines: new client.Counter({
      name: `${PREFIX}log_lines_total`,
      help: 'Log lines read.',
      labelNames: ['target', 'service'],
      registers,
    }),
    logLinesTruncated: new client.Counter({
      name: `${PREFIX}log_lines_truncated_total`,
      help: 'Log lines longer than the line limit, cut to it.',
      labelNames: ['target', 'service'],
      registers,
    }),
    logCarriersCut: new client.Counter({
      name: `${PREFIX}log_carriers_cut_total`,
      help: 'Records carrying user text (tool-call output, grammars) cut off from their tail at their line or byte cap: each ends at the next engine record instead.',
      labelNames: ['target', 'service', 'carrier', 'cap'],
      registers,
    }),
    logRotations: new client.Counter({
      name: `${PREFIX}log_rotations_total`,
      help: 'Log rotations seen, by kind (rename, truncate, recreate).',
      labelNames: ['target', 'service', 'kind'],
      registers,
    }),
    logReadErrors: new client.Counter({
      name: `${PREFIX}log_read_errors_total`,
      help: 'Errors reading log sources, by reason (missing, permission, unreadable, binary, line_too_long, malformed, io).',
      labelNames: ['target', 'service', 'reason'],
      registers,
    }),
    logSkippedBytes: new client.Counter({
      name: `${PREFIX}log_skipped_bytes_total`,
      help: 'Bytes written while the daemon was down and skipped unread because of maxCatchUpBytes.',
      labelNames: ['target', 'service'],
      registers,
    }),
    stateSaveErrors: new client.Counter({
      name: `${PREFIX}state_save_errors_total`,
      help: 'Failed saves of daemon state in stateDir (log offsets, journal cursors, the events journal), by store, once per streak of the same error; the previous state stays whole.',
      labelNames: ['store'],
      registers,
    }),
    stateLoadErrors: new client.Counter({
      name: `${PREFIX}state_load_errors_total`,
      help: 'Unusable daemon state files found at start (corrupt or unreadable), by store and recovery: previous (the generation before was loaded; lines since its save are read again), lost (none usable: log files are read from their start, bounded by maxCatchUpBytes).',
      labelNames: ['store', 'recovery'],
      registers,
    }),
    logFollowerTick: new client.Gauge({
      name: `${PREFIX}log_follower_last_tick_timestamp_seconds`,
      help: 'Unix time the follower of the service log last polled its files (it polls whether or not lines come).',
      labelNames: ['target', 'service'],
      registers,
    }),
    logLastLine: new client.Gauge({
      name: `${PREFIX}log_last_line_timestamp_seconds`,
      help: 'Unix time a line was last read from the service log.',
      labelNames: ['target', 'service'],
      registers,
    }),
  };
}

export function createEngineMetrics(registry: client.Registry) {
  const registers = [registry];
  const gauge = (name: string, help: string) =>
    new client.Gauge({ name: `${PREFIX}${name}`, help, labelNames: ['target', 'service'], registers });
  const rankGauge = (name: string, help: string) =>
    new client.Gauge({
      name: `${PREFIX}${name}`,
      help,
      labelNames: ['target', 'service', 'rank'],
      registers,
    });
  return {
    engineRunning: gauge(
      'engine_running_requests',
      'Running requests reported by the engine (#running-req).',
    ),
    engineQueued: gauge('engine_queued_requests', 'Queued requests reported by the engine (#queue-req).'),
    engineTransferQueue: gauge(
      'engine_transfer_queue_requests',
      'PD decode transfer queue (#transfer-req) or prefill in-flight transfers (#inflight-req).',
    ),
    enginePreallocQueue: gauge(
      'engine_prealloc_queue_requests',
      'PD prealloc/bootstrap queue (#prealloc-req or #bootstrap-req).',
    ),
    engineGenThroughput: gauge(
      'engine_gen_throughput_tokens_per_second',
      'Generation throughput reported by the engine.',
    ),
    engineTokenUsage: gauge('engine_token_usage_ratio', 'KV cache token usage, 0..1.'),
    engineLastBatch: gauge(
      'engine_last_batch_timestamp_seconds',
      'Unix time of the last Prefill/Decode batch line.',
    ),
    engineBytesPerFullToken: gauge(
      'engine_bytes_per_full_token',
      'KV bytes per full token, from startup logs.',
    ),
    engineScrapeSuccess: gauge(
      'engine_scrape_success',
      'Whether the last scrape of the engine /metrics succeeded.',
    ),
    // Per rank (SGLang DP attention `DP1`, vLLM data parallel `Engine 001`); the unlabelled gauges above are the
    // engine totals (sums; token usage is the maximum over ranks). `rank` is bounded (at most 64 per service; a rank
    // silent for a minute while another printed leaves, engine-ranks.ts).
    engineRankRunning: rankGauge(
      'engine_rank_running_requests',
      'Running requests reported by one engine rank.',
    ),
    engineRankQueued: rankGauge(
      'engine_rank_queued_requests',
      'Queued requests reported by one engine rank.',
    ),
    engineRankTokenUsage: rankGauge(
      'engine_rank_token_usage_ratio',
      'KV cache token usage of one engine rank, 0..1.',
    ),
    engineRankGenThroughput: rankGauge(
      'engine_rank_gen_throughput_tokens_per_second',
      'Generation throughput reported by one engine rank.',
    ),
    engineRanksRefused: new client.Counter({
      name: `${PREFIX}engine_rank_lines_refused_total`,
      help: 'Engine lines not read because their rank would pass the 64 ranks kept per service (a log naming more ranks than any engine has).',
      labelNames: ['target', 'service'],
      registers,
    }),
    engineStalled: gauge(
      'engine_stalled',
      '1 while the engine holds requests and its finished/generated counters have not moved for stallAfter.',
    ),
    engineCrawling: gauge(
      'engine_crawling',
      "1 while the engine's tokens per running request stay below crawlFraction of its own trailing baseline for stallAfter.",
    ),
    engineThroughputRatio: gauge(
      'engine_throughput_ratio',
      "Tokens per second per running request, as a fraction of the engine's own trailing baseline (absent until there is one).",
    ),
    engineSleeping: gauge(
      'engine_sleeping',
      '1 while the engine reports itself asleep (vLLM sleep mode): no stall or crawl is judged on it.',
    ),
    engineKvTransferLatency: gauge(
      'engine_kv_transfer_latency_seconds',
      'Mean KV-cache transfer latency over the last scrape interval (SGLang PD histogram), or the latest transfer (older gauge).',
    ),
    engineWorkersUnhealthy: gauge(
      'engine_workers_unhealthy',
      'Router: workers whose health gauge is not 1 (smg_worker_health).',
    ),
    engineCircuitsOpen: gauge(
      'engine_circuits_open',
      'Router: workers whose circuit breaker is open (smg_worker_cb_state 1).',
    ),
    engineOldestRequestAge: gauge(
      'engine_oldest_request_age_seconds',
      'Router: a lower bound on the age of its oldest request in flight (the oldest non-empty in-flight age bucket).',
    ),
    // The increase of the engine's own failure counters, by kind (a bounded label: ENGINE_FAILURE_KINDS).
    engineFailures: new client.Counter({
      name: `${PREFIX}engine_failures_total`,
      help: "Failures the engine's own counters reported (their increase): kind kv_transfer_failed, kv_expired, aborted, preempted.",
      labelNames: ['target', 'service', 'kind'],
      registers,
    }),
  };
}

export function createTargetMetrics(registry: client.Registry) {
  const registers = [registry];
  return {
    targetState: new client.Gauge({
      name: `${PREFIX}target_state`,
      help: 'Current state of the target: 1 for the state it is in, 0 for the others.',
      labelNames: ['target', 'state'],
      registers,
    }),
    targetWedged: new client.Gauge({
      name: `${PREFIX}target_wedged`,
      help: '1 while the target is wedged: health answers but completions do not finish.',
      labelNames: ['target'],
      registers,
    }),
    targetStateSince: new client.Gauge({
      name: `${PREFIX}target_state_since_timestamp_seconds`,
      help: 'Unix time the target entered its current state.',
      labelNames: ['target'],
      registers,
    }),
    targetEnteredOk: new client.Gauge({
      name: `${PREFIX}target_entered_ok_timestamp_seconds`,
      help: 'Unix time the target last entered ok (0 before it ever has); it stays when the target leaves ok.',
      labelNames: ['target'],
      registers,
    }),
    targetDiagnosis: new client.Gauge({
      name: `${PREFIX}target_diagnosis`,
      help: '1 for the diagnosis attached to the current state of the target.',
      labelNames: ['target', 'diagnosis'],
      registers,
    }),
    // Per completion probe slot, from the slot's wrong-answer window the verdict reads (src/core/wrong-window.ts):
    // the target shows one diagnosis, and stronger evidence (an engine stall, a crawl) hides wrong_output there
    // while the slot still serves garbage. WedgewatchWrongOutput pages on this, not on the shown diagnosis.
    probeWrongOutputHeld: new client.Gauge({
      name: `${PREFIX}probe_wrong_output_held`,
      help: `1 while the probe slot's wrong-answer hold is on (a wrong answer among its last ${WRONG_WINDOW}, until ${WRONG_WINDOW} clean answers in a row or ${WRONG_HOLD_MS / 60_000} minutes of them), whatever diagnosis the target shows.`,
      labelNames: PROBE_LABELS,
      registers,
    }),
    probeWrongAnswers: new client.Gauge({
      name: `${PREFIX}probe_wrong_answers`,
      help: `Wrong answers in the probe slot's current wrong-answer window (its last ${WRONG_WINDOW} answers since the first wrong one; 0 once the hold ends).`,
      labelNames: PROBE_LABELS,
      registers,
    }),
    wedgesTotal: new client.Counter({
      name: `${PREFIX}wedges_total`,
      help: 'Transitions into wedged, by cause (diagnosis).',
      labelNames: ['target', 'cause'],
      registers,
    }),
    remediations: new client.Counter({
      name: `${PREFIX}remediations_total`,
      help: 'Remediation attempts by result (success, failure, timeout, dry_run, cooldown, capped, paused).',
      labelNames: ['target', 'action', 'result'],
      registers,
    }),
    remediationPaused: new client.Gauge({
      name: `${PREFIX}remediation_paused`,
      help: '1 while an operator has paused remediation for the target.',
      labelNames: ['target'],
      registers,
    }),
    watchedFileChange: new client.Gauge({
      name: `${PREFIX}watched_file_change_timestamp_seconds`,
      help: 'Unix time a watched file (serve script, unit, env file) last changed.',
      labelNames: ['target', 'path'],
      registers,
    }),
  };
}

/** Incident bundles (issue 19): captures by result, and how long they took. */
export function createIncidentMetrics(registry: client.Registry) {
  const registers = [registry];
  return {
    incidentsTotal: new client.Counter({
      name: `${PREFIX}incidents_total`,
      help: 'Incident captures by result (captured, partial, no_space, failed).',
      labelNames: ['target', 'result'],
      registers,
    }),
    incidentCaptureDuration: new client.Histogram({
      name: `${PREFIX}incident_capture_duration_seconds`,
      // No target label: a histogram per target would outlive a target removed by a reload.
      help: 'Wall time of an incident capture, from the transition to its manifest (bounded by captureTimeout).',
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60],
      registers,
    }),
  };
}

/** What the node tells us (issue 42): the engine's processes, GPUs and NCCL ranks, read by src/sources/node/. */
export function createNodeMetrics(registry: client.Registry) {
  const registers = [registry];
  const svc = ['target', 'service'] as const;
  return {
    nodeThreads: new client.Gauge({
      name: `${PREFIX}node_threads`,
      help: "Threads of the service's engine processes at the last /proc reading.",
      labelNames: svc,
      registers,
    }),
    nodeCpu: new client.Gauge({
      name: `${PREFIX}node_process_cpu_cores`,
      help: "CPU the service's engine processes used over the last interval, in cores.",
      labelNames: svc,
      registers,
    }),
    nodeResident: new client.Gauge({
      name: `${PREFIX}node_process_resident_bytes`,
      help: "Resident memory of the service's engine processes.",
      labelNames: svc,
      registers,
    }),
    nodeThreadsLost: new client.Counter({
      name: `${PREFIX}node_threads_lost_total`,
      help: 'Long-lived threads of an engine process that went away while the process lived on.',
      labelNames: svc,
      registers,
    }),
    nodeRestarts: new client.Counter({
      name: `${PREFIX}node_process_restarts_total`,
      help: "The service's main engine process was replaced (its pid or start time changed).",
      labelNames: svc,
      registers,
    }),
    nodeGpuXid: new client.Gauge({
      name: `${PREFIX}node_gpu_last_xid`,
      help: 'The last XID error a GPU reported (dcgm-exporter DCGM_FI_DEV_XID_ERRORS); 0 for none.',
      labelNames: ['target', 'gpu'],
      registers,
    }),
    nodeGpuUtil: new client.Gauge({
      name: `${PREFIX}node_gpu_utilization_ratio`,
      help: 'GPU SM activity (or utilisation where DCGM does not profile), 0..1.',
      labelNames: ['target', 'gpu'],
      registers,
    }),
    nodeNcclMissing: new client.Gauge({
      name: `${PREFIX}node_nccl_missing_ranks`,
      help: "Ranks NCCL's RAS could not reach at the last STATUS query.",
      labelNames: ['target'],
      registers,
    }),
    nodeReadErrors: new client.Counter({
      name: `${PREFIX}node_read_errors_total`,
      help: 'Node readings that failed or timed out, by source (processes, gpus, nccl, stacks).',
      labelNames: ['target', 'source'],
      registers,
    }),
  };
}

/** The traffic path (issue 43): readiness per backend, the pool rule, HAProxy's agent and gateway drains. */
export function createTrafficMetrics(registry: client.Registry) {
  const registers = [registry];
  return {
    backendInRotation: new client.Gauge({
      name: `${PREFIX}backend_in_rotation`,
      help: 'Whether GET /ready and the agent answer the backend (a target, or target/endpoint) as in rotation (1) or out (0).',
      labelNames: ['backend', 'pool'],
      registers,
    }),
    backendHeld: new client.Gauge({
      name: `${PREFIX}backend_held_in_rotation`,
      help: '1 while the backend is not ready but kept in rotation: taking it out would leave its pool below minInRotation (the last healthy backend is never drained).',
      labelNames: ['backend', 'pool'],
      registers,
    }),
    drainsTotal: new client.Counter({
      name: `${PREFIX}drains_total`,
      help: 'Gateway worker removals (action drain) and re-additions (undrain) by result (success, failure, dry_run, capped).',
      labelNames: ['target', 'action', 'result'],
      registers,
    }),
    drained: new client.Gauge({
      name: `${PREFIX}drained`,
      help: "1 while the target's worker is out of its gateway by this daemon's drain (dry runs included).",
      labelNames: ['target'],
      registers,
    }),
    agentChecks: new client.Counter({
      name: `${PREFIX}agent_checks_total`,
      help: "HAProxy agent checks answered, by the server's configured name or address and the answer (up, down, drain, maint; unknown when no server matched, timeout when nothing said which; no_verdict, with no line sent, while the target has no verdict yet).",
      labelNames: ['server', 'answer'],
      registers,
    }),
  };
}

export function createDaemonMetrics(registry: client.Registry) {
  const registers = [registry];
  return {
    buildInfo: new client.Gauge({
      name: `${PREFIX}build_info`,
      help: 'Constant 1, labelled with the wedgewatch version, git revision and branch, and the Node.js version.',
      labelNames: ['version', 'revision', 'branch', 'node_version'],
      registers,
    }),
    configReloadSuccessful: new client.Gauge({
      name: `${PREFIX}config_last_reload_successful`,
      help: 'Whether the last configuration reload succeeded.',
      registers,
    }),
    configReloadSuccessTimestamp: new client.Gauge({
      name: `${PREFIX}config_last_reload_success_timestamp_seconds`,
      help: 'Unix time of the last successful configuration reload.',
      registers,
    }),
  };
}

export type ProbeMetrics = ReturnType<typeof createProbeMetrics>;
export type LogMetrics = ReturnType<typeof createLogMetrics>;
export type EngineMetrics = ReturnType<typeof createEngineMetrics>;
export type TargetMetrics = ReturnType<typeof createTargetMetrics>;
export type DaemonMetrics = ReturnType<typeof createDaemonMetrics>;
export type IncidentMetrics = ReturnType<typeof createIncidentMetrics>;
export type NodeMetrics = ReturnType<typeof createNodeMetrics>;
export type TrafficMetrics = ReturnType<typeof createTrafficMetrics>;
export type Metrics = ProbeMetrics &
  NodeMetrics &
  LogMetrics &
  EngineMetrics &
  TargetMetrics &
  TrafficMetrics &
  DaemonMetrics &
  IncidentMetrics & {
    registry: client.Registry;
  };

/** One registry with every family plus prom-client's process and event-loop defaults. */
export function createMetrics(options: { defaults?: boolean } = {}): Metrics {
  const registry = new client.Registry();
  if (options.defaults !== false) {
    // Unprefixed, as every Prometheus exporter exposes process_* and runtime metrics.
    collectRuntimeMetrics(registry, client.Gauge);
    dropGaugesEndingInTotal(registry);
  }
  const m: Metrics = {
    registry,
    ...createProbeMetrics(registry),
    ...createLogMetrics(registry),
    ...createEngineMetrics(registry),
    ...createTargetMetrics(registry),
    ...createDaemonMetrics(registry),
    ...createIncidentMetrics(registry),
    ...createNodeMetrics(registry),
    ...createTrafficMetrics(registry),
  };
  m.buildInfo.set(
    { version: VERSION, revision: BUILD.revision, branch: BUILD.branch, node_version: process.version },
    1,
  );
  return m;
}

/** Whether `metric` already has a series whose labels include every one of `labels`. */
export function hasSeries(
  metric: client.Gauge<string> | client.Counter<string>,
  labels: Record<string, string>,
): boolean {
  // prom-client keeps label sets in `hashMap`; reading it avoids an async get() where the caller is sync.
  const internal = metric as unknown as { hashMap?: Record<string, { labels: Record<string, unknown> }> };
  return Object.values(internal.hashMap ?? {}).some((v) =>
    Object.entries(labels).every(([k, x]) => v.labels[k] === x),
  );
}

/**
 * prom-client exports three gauges named *_total, which `promtool check metrics` rejects (the suffix is for
 * counters). They are only sums of nodejs_active_{handles,requests,resources}{type}, which stay.
 */
function dropGaugesEndingInTotal(registry: client.Registry): void {
  for (const name of ['nodejs_active_handles', 'nodejs_active_requests', 'nodejs_active_resources']) {
    registry.removeSingleMetric(`${name}_total`);
  }
}

/**
 * Every series name a dashboard or alert may use, with histogram and default-metric suffixes expanded.
 * Built from a real registry so it can never drift from what /metrics serves.
 */
export async function exportedMetricNames(): Promise<Set<string>> {
  const m = createMetrics();
  const names = new Set<string>();
  for (const metric of await m.registry.getMetricsAsJSON()) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram') {
      for (const s of ['_bucket', '_sum', '_count']) names.add(metric.name + s);
    }
    if (String(metric.type) === 'summary') {
      for (const s of ['_sum', '_count']) names.add(metric.name + s);
    }
  }
  return names;
}
