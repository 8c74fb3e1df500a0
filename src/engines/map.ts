// Maps an engine's scraped metrics (SGLang sglang:*, vLLM vllm:*, router smg_*) to the fields of an
// EngineSignal: load (running, queued, PD queues) and monotonic progress counters (finished, generated).
import type { EngineSignal } from '../signals.js';
import type { Sample } from './promtext.js';

type EngineFields = Pick<
  EngineSignal,
  | 'running'
  | 'queued'
  | 'transferQueue'
  | 'preallocQueue'
  | 'finishedTotal'
  | 'generatedTokensTotal'
  | 'genThroughput'
  | 'tokenUsage'
>;

/**
 * Sums a family over its series. Scheduler gauges repeat per tensor-parallel rank with the same value, so
 * only rank 0 is counted (data-parallel ranks are distinct and add up).
 */
function sum(samples: Sample[], names: string[]): number | undefined {
  let total: number | undefined;
  for (const s of samples) {
    if (!names.includes(s.name)) continue;
    if (s.labels.tp_rank !== undefined && s.labels.tp_rank !== '0') continue;
    if (!Number.isFinite(s.value)) continue;
    total = (total ?? 0) + s.value;
  }
  return total;
}

function add(...xs: Array<number | undefined>): number | undefined {
  const present = xs.filter((x): x is number => x !== undefined);
  return present.length === 0 ? undefined : present.reduce((a, b) => a + b, 0);
}

export function mapEngineMetrics(samples: Sample[]): EngineFields {
  const out: EngineFields = {
    running: add(sum(samples, ['sglang:num_running_reqs']), sum(samples, ['vllm:num_requests_running'])),
    queued: add(sum(samples, ['sglang:num_queue_reqs']), sum(samples, ['vllm:num_requests_waiting'])),
    transferQueue: add(
      sum(samples, ['sglang:num_decode_transfer_queue_reqs']),
      sum(samples, ['sglang:num_prefill_inflight_queue_reqs']),
    ),
    preallocQueue: add(
      sum(samples, ['sglang:num_prefill_prealloc_queue_reqs', 'sglang:num_prefill_bootstrap_queue_reqs']),
      sum(samples, ['sglang:num_decode_prealloc_queue_reqs']),
    ),
    finishedTotal: add(
      sum(samples, ['sglang:num_requests_total']),
      sum(samples, ['vllm:request_success_total']),
    ),
    generatedTokensTotal: add(
      sum(samples, ['sglang:generation_tokens_total']),
      sum(samples, ['vllm:generation_tokens_total']),
    ),
    genThroughput: sum(samples, ['sglang:gen_throughput']),
    // vLLM builds that export both usage names carry the same value in each: take the first present.
    tokenUsage: ['sglang:token_usage', 'vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc']
      .map((n) => sum(samples, [n]))
      .find((v) => v !== undefined),
  };
  // The router (smg) has no scheduler: requests active on workers are its load, answered requests its progress.
  if (out.running === undefined) out.running = sum(samples, ['smg_worker_requests_active']);
  if (out.finishedTotal === undefined) out.finishedTotal = sum(samples, ['smg_http_responses_total']);
  return out;
}
