// vLLM V1 metrics (vllm/v1/metrics/loggers.py PrometheusStatLogger and the KV-connector stats of
// kv_connector/v1/nixl_connector.py / nixl/worker.py; vLLM 0.8 → main 2026-08). Data-parallel engines carry an
// `engine` label: counts add up across engines, usage does not.
import { maxOf, sumOf, type EngineMapping, type EngineFields } from './types.js';

/** finished_reason values that are not work done (vllm/v1/engine FinishReason). */
const NOT_PROGRESS = new Set(['abort', 'error']);

export const vllmMapping: EngineMapping = {
  name: 'vllm',
  detect: (samples) => samples.some((s) => s.name.startsWith('vllm:')),
  map(samples): EngineFields {
    const sum = (names: string[]) => sumOf(samples, names);
    return {
      running: sum(['vllm:num_requests_running']),
      queued: sum(['vllm:num_requests_waiting']),
      // An aborted or failed request finished nothing: not progress.
      finishedTotal: sumOf(
        samples,
        ['vllm:request_success_total'],
        (s) => !NOT_PROGRESS.has(s.labels.finished_reason ?? ''),
      ),
      generatedTokensTotal: sum(['vllm:generation_tokens_total']),
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
    };
  },
};
