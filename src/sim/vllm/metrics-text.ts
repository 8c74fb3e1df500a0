// The vLLM API server's /metrics in Prometheus text format, with the names and labels of vLLM main 2026-08
// (vllm/v1/metrics/loggers.py PrometheusStatLogger: labelnames ["model_name", "engine"]; counters get the
// `_total` sample suffix from prometheus_client). Gauges show the scheduler stats the API server last received
// from the engine core: frozen while the core is stuck or dead.

export interface VllmGauges {
  running: number;
  waiting: number;
  /** 0..1 */
  kvUsage: number;
}

export interface VllmCounters {
  promptTokens: number;
  generationTokens: number;
  preemptions: number;
  prefixQueries: number;
  prefixHits: number;
  /** vllm:request_success by finished_reason (vllm/v1/engine/__init__.py FINISH_REASON_STRINGS). */
  finished: Record<FinishReason, number>;
  /** Set once a NIXL connector is in use (the nixl_transfer_failure fault): its failed-transfer counter. */
  nixlFailedTransfers?: number;
  /** vllm:inter_token_latency_seconds: every output token after a request's first, by the time since its last. */
  itl: { buckets: number[]; sum: number; count: number };
  /** vllm:request_queue_time_seconds: each finished request's time WAITING. */
  queueTime: { buckets: number[]; sum: number; count: number };
}

/** PrometheusStatLogger's request_latency_buckets, which histogram_queue_time_request uses (loggers.py @005a810b). */
export const REQUEST_LATENCY_BUCKETS = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0,
  960.0, 1920.0, 7680.0,
] as const;

/** A finished request's queued_time, seconds, into vllm:request_queue_time_seconds. */
export function observeQueueTime(c: VllmCounters, seconds: number): void {
  REQUEST_LATENCY_BUCKETS.forEach((le, i) => {
    if (seconds <= le) c.queueTime.buckets[i]!++;
  });
  c.queueTime.sum += seconds;
  c.queueTime.count++;
}

/** PrometheusStatLogger's histogram_inter_token_latency buckets (vllm/v1/metrics/loggers.py). */
export const ITL_BUCKETS = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
] as const;

/** One inter-token latency, seconds, into the histogram (buckets cumulative, as prometheus_client keeps them). */
export function observeItl(c: VllmCounters, seconds: number): void {
  ITL_BUCKETS.forEach((le, i) => {
    if (seconds <= le) c.itl.buckets[i]!++;
  });
  c.itl.sum += seconds;
  c.itl.count++;
}

export const FINISH_REASONS = ['stop', 'length', 'abort', 'error'] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];

export function newCounters(): VllmCounters {
  return {
    promptTokens: 0,
    generationTokens: 0,
    preemptions: 0,
    prefixQueries: 0,
    prefixHits: 0,
    finished: { stop: 0, length: 0, abort: 0, error: 0 },
    itl: { buckets: ITL_BUCKETS.map(() => 0), sum: 0, count: 0 },
    queueTime: { buckets: REQUEST_LATENCY_BUCKETS.map(() => 0), sum: 0, count: 0 },
  };
}

/** A stuck data-parallel engine's frozen series (the rank_stall fault): requests held, tokens not moving. */
export interface StalledEngine {
  engine: string;
  running: number;
}

/** The generation-token count a stuck engine's series freezes at (any constant: only its movement is read). */
const STALLED_GENERATION_TOKENS = 4096;

export function vllmMetricsText(
  modelName: string,
  g: VllmGauges,
  c: VllmCounters,
  stalled?: StalledEngine,
): string {
  const labels = `model_name="${modelName}",engine="0"`;
  const other = stalled && `model_name="${modelName}",engine="${stalled.engine}"`;
  const out: string[] = [];
  const family = (name: string, type: 'gauge' | 'counter', help: string, samples: [string, number][]) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [l, v] of samples) out.push(`${name}${type === 'counter' ? '_total' : ''}{${l}} ${num(v)}`);
  };
  family('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', [
    [labels, g.running],
    ...(other ? [[other, stalled!.running] as [string, number]] : []),
  ]);
  family('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', [
    [labels, g.waiting],
  ]);
  family(
    'vllm:engine_sleep_state',
    'gauge',
    'Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.',
    [
      [`${labels},sleep_state="awake"`, 1],
      [`${labels},sleep_state="weights_offloaded"`, 0],
      [`${labels},sleep_state="discard_all"`, 0],
    ],
  );
  family('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', [
    [labels, g.kvUsage],
  ]);
  family(
    'vllm:prefix_cache_queries',
    'counter',
    'Prefix cache queries, in terms of number of queried tokens.',
    [[labels, c.prefixQueries]],
  );
  family('vllm:prefix_cache_hits', 'counter', 'Prefix cache hits, in terms of number of cached tokens.', [
    [labels, c.prefixHits],
  ]);
  family('vllm:num_preemptions', 'counter', 'Cumulative number of preemption from the engine.', [
    [labels, c.preemptions],
  ]);
  family('vllm:prompt_tokens', 'counter', 'Number of prefill tokens processed.', [[labels, c.promptTokens]]);
  family('vllm:generation_tokens', 'counter', 'Number of generation tokens processed.', [
    [labels, c.generationTokens],
    ...(other ? [[other, STALLED_GENERATION_TOKENS] as [string, number]] : []),
  ]);
  family(
    'vllm:request_success',
    'counter',
    'Count of successfully processed requests.',
    FINISH_REASONS.map((r) => [`${labels},finished_reason="${r}"`, c.finished[r]]),
  );
  // histogram_inter_token_latency, observed in PrometheusStatLogger.record from
  // iteration_stats.inter_token_latencies_iter (vllm/v1/metrics/loggers.py).
  out.push(
    '# HELP vllm:inter_token_latency_seconds Histogram of inter-token latency in seconds.',
    '# TYPE vllm:inter_token_latency_seconds histogram',
    ...ITL_BUCKETS.map(
      (le, i) =>
        `vllm:inter_token_latency_seconds_bucket{${labels},le="${num(le)}"} ${num(c.itl.buckets[i]!)}`,
    ),
    `vllm:inter_token_latency_seconds_bucket{${labels},le="+Inf"} ${num(c.itl.count)}`,
    `vllm:inter_token_latency_seconds_count{${labels}} ${num(c.itl.count)}`,
    `vllm:inter_token_latency_seconds_sum{${labels}} ${num(c.itl.sum)}`,
  );
  // histogram_queue_time_request, observed in PrometheusStatLogger.record for each finished request.
  out.push(
    '# HELP vllm:request_queue_time_seconds Histogram of time spent in WAITING phase for request.',
    '# TYPE vllm:request_queue_time_seconds histogram',
    ...REQUEST_LATENCY_BUCKETS.map(
      (le, i) =>
        `vllm:request_queue_time_seconds_bucket{${labels},le="${num(le)}"} ${num(c.queueTime.buckets[i]!)}`,
    ),
    `vllm:request_queue_time_seconds_bucket{${labels},le="+Inf"} ${num(c.queueTime.count)}`,
    `vllm:request_queue_time_seconds_count{${labels}} ${num(c.queueTime.count)}`,
    `vllm:request_queue_time_seconds_sum{${labels}} ${num(c.queueTime.sum)}`,
  );
  if (c.nixlFailedTransfers !== undefined) {
    // kv_connector/v1/nixl/stats.py NixlPromMetrics (KVConnectorPrometheus; labels as above).
    family('vllm:nixl_num_failed_transfers', 'counter', 'Number of failed NIXL KV Cache transfers.', [
      [labels, c.nixlFailedTransfers],
    ]);
  }
  return out.join('\n') + '\n';
}

/** Python float formatting as prometheus_client prints it (1.0, 0.25). */
function num(v: number): string {
  return Number.isInteger(v) ? `${v}.0` : String(v);
}
