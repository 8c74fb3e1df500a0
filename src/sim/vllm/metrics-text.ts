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
