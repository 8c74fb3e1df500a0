// vLLM V1 metrics (vllm/v1/metrics/loggers.py PrometheusStatLogger and the KV-connector stats of
// kv_connector/v1/nixl_connector.py / nixl/worker.py; vLLM 0.8 → main 2026-08). Data-parallel engines carry an
// `engine` label: counts add up across engines, usage does not.
//
// Waiting by reason and sleep state are PrometheusStatLogger's (vllm-project/vllm vllm/v1/metrics/loggers.py,
// main 2026-08): `vllm:num_requests_waiting_by_reason{reason}` with `capacity` (num_waiting_reqs) and `deferred`
// (num_skipped_waiting_reqs: "deferred by transient constraints (LoRA budget, KV transfer, blocked status). Sum
// of all reasons equals vllm:num_requests_waiting"); the scheduler puts a request whose KV loads asynchronously
// from a remote prefill (RequestStatus.WAITING_FOR_REMOTE_KVS, vllm/v1/core/sched/scheduler.py schedule) into
// skipped_waiting, so `deferred` is vLLM's PD queue: requests waiting for remote KV. `vllm:engine_sleep_state
// {sleep_state="awake"}` is 0 while the engine sleeps (level 1 `weights_offloaded`, level 2 `discard_all`).
import type { RankSample } from '../../../core/signals.js';
import type { Sample } from '../promtext.js';
import { maxOf, sumOf, type EngineMapping, type EngineFields } from './types.js';

/** finished_reason values that are not work done (vllm/v1/engine FinishReason). */
const NOT_PROGRESS = new Set(['abort', 'error']);

export const vllmMapping: EngineMapping = {
  name: 'vllm',
  families: [
    'vllm:num_requests_running',
    'vllm:num_requests_waiting',
    'vllm:request_success_total',
    'vllm:generation_tokens_total',
    'vllm:kv_cache_usage_perc',
    'vllm:gpu_cache_usage_perc',
    'vllm:nixl_num_failed_transfers_total',
    'vllm:nixl_num_failed_transfers',
    'vllm:nixl_num_kv_expired_reqs_total',
    'vllm:nixl_num_kv_expired_reqs',
    'vllm:num_preemptions_total',
    'vllm:num_preemptions',
    'vllm:num_requests_waiting_by_reason',
    'vllm:engine_sleep_state',
    'vllm:inter_token_latency_seconds_sum',
    'vllm:inter_token_latency_seconds_count',
    'vllm:request_queue_time_seconds_sum',
    'vllm:request_queue_time_seconds_count',
  ],
  labels: ['finished_reason', 'engine', 'reason', 'sleep_state'],
  detect: (samples) => samples.some((s) => s.name.startsWith('vllm:')),
  map(samples): EngineFields {
    const sum = (names: string[]) => sumOf(samples, names);
    const waiting = sum(['vllm:num_requests_waiting']);
    // Requests waiting for remote KV (and other transient deferrals): the PD queue, not work the engine could run.
    const deferred = sumOf(
      samples,
      ['vllm:num_requests_waiting_by_reason'],
      (s) => s.labels.reason === 'deferred',
    );
    const awake = samples.filter(
      (s) =>
        s.name === 'vllm:engine_sleep_state' && s.labels.sleep_state === 'awake' && Number.isFinite(s.value),
    );
    return {
      running: sum(['vllm:num_requests_running']),
      // num_requests_waiting counts the deferred ones too: each request is counted once, in one queue.
      queued: waiting === undefined || deferred === undefined ? waiting : Math.max(0, waiting - deferred),
      transferQueue: deferred,
      sleeping: awake.length > 0 ? awake.every((s) => s.value === 0) : undefined,
      // An aborted or failed request finished nothing: not progress.
      finishedTotal: sumOf(
        samples,
        ['vllm:request_success_total'],
        (s) => !NOT_PROGRESS.has(s.labels.finished_reason ?? ''),
      ),
      generatedTokensTotal: sum(['vllm:generation_tokens_total']),
      // PrometheusStatLogger's histogram_inter_token_latency, observed in record() for every
      // iteration_stats.inter_token_latencies_iter (each request's token after its first): the crawl clock's
      // per-request rate, which a token counter divided by a running gauge only approximates.
      interTokenLatencySumSeconds: sum(['vllm:inter_token_latency_seconds_sum']),
      interTokenLatencyCount: sum(['vllm:inter_token_latency_seconds_count']),
      // PrometheusStatLogger's histogram_queue_time_request, `vllm:request_queue_time_seconds` ("Histogram of time
      // spent in WAITING phase for request"), observed in record() for each of iteration_stats.finished_requests as
      // `finished_request.queued_time` (vllm-project/vllm vllm/v1/metrics/loggers.py @005a810b, PrometheusStatLogger
      // .__init__ and .record): a request is counted when it finishes, with the time it waited to be scheduled.
      queueTimeSumSeconds: sum(['vllm:request_queue_time_seconds_sum']),
      queueTimeCount: sum(['vllm:request_queue_time_seconds_count']),
      // `kv_cache_usage_perc` replaced `gpu_cache_usage_perc` (0.10); builds that export both carry one value.
      tokenUsage: maxOf(samples, ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc']),
      abortedTotal: sumOf(
        samples,
        ['vllm:request_success_total'],
        (s) => s.labels.finished_reason === 'abort',
      ),
      kvTransferFailedTotal: sum(['vllm:nixl_num_failed_transfers_total', 'vllm:nixl_num_failed_transfers']),
      kvExpiredTotal: sum(['vllm:nixl_num_kv_expired_reqs_total', 'vllm:nixl_num_kv_expired_reqs']),
      preemptedTotal: sum(['vllm:num_preemptions_total', 'vllm:num_preemptions']),
      ranks: engineRanks(samples),
    };
  },
};

/**
 * Data-parallel engines, one per `engine` label value (PrometheusStatLogger labels every series with engine_idx):
 * running requests and generated tokens each. A stuck engine core sends no stats, so its gauge holds and its
 * counter stops while its siblings' move.
 */
function engineRanks(samples: Sample[]): Record<string, RankSample> | undefined {
  const ranks: Record<string, RankSample> = {};
  for (const s of samples) {
    const id = s.labels.engine;
    if (id === undefined || !Number.isFinite(s.value)) continue;
    if (s.name === 'vllm:num_requests_running') {
      const r = (ranks[id] ??= {});
      r.running = (r.running ?? 0) + s.value;
    } else if (s.name === 'vllm:generation_tokens_total') {
      const r = (ranks[id] ??= {});
      r.generatedTokensTotal = (r.generatedTokensTotal ?? 0) + s.value;
    }
  }
  return Object.keys(ranks).length >= 2 ? ranks : undefined;
}
