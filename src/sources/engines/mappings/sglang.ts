// SGLang scheduler/tokenizer metrics (srt/metrics/collector.py SchedulerMetricsCollector, TokenizerMetricsCollector,
// and the disaggregation metrics mixin; SGLang 2025-05 → main 2026-08; since 2026 the module is
// srt/observability/metrics_collector.py, read at sgl-project/sglang@016d860).
//
// With `--enable-priority-scheduling` every scheduler series carries a `priority` label: the totals are the
// series with priority="" and the queue gauges (running, waiting, the four PD queues) add one series per request
// priority, `priority="<int>"` (metrics_collector.py@016d860 SchedulerMetricsCollector.init_new sets
// labels["priority"] = "", _log_gauge_queue_count "total under default labels, per-priority breakdown under
// priority=\"<int>\""). Summing both counted every request twice, so only the totals are read.
import type { Sample } from '../promtext.js';
import { add, maxOf, sumOf, type EngineMapping, type EngineFields } from './types.js';

/**
 * Scheduler series are exported by each attention-TP group leader. Plain TP builds that export every TP rank
 * repeat one value, so without a `dp_rank` label only tp_rank 0 counts; with DP attention every DP rank is
 * its own scheduler (and its own tp_rank), so each dp_rank counts once (its lowest tp_rank).
 */
function schedulerSeries(samples: Sample[]): (s: Sample) => boolean {
  const keep = rankSeries(samples);
  return (s) => (s.labels.priority === undefined || s.labels.priority === '') && keep(s);
}

function rankSeries(samples: Sample[]): (s: Sample) => boolean {
  const dp = samples.some((s) => s.name.startsWith('sglang:') && s.labels.dp_rank !== undefined);
  if (!dp) return (s) => s.labels.tp_rank === undefined || s.labels.tp_rank === '0';
  const lowest = new Map<string, number>();
  for (const s of samples) {
    if (s.labels.dp_rank === undefined || s.labels.tp_rank === undefined) continue;
    const key = `${s.name}\u0000${s.labels.dp_rank}`;
    lowest.set(key, Math.min(lowest.get(key) ?? Infinity, Number(s.labels.tp_rank)));
  }
  return (s) =>
    s.labels.dp_rank === undefined ||
    s.labels.tp_rank === undefined ||
    lowest.get(`${s.name}\u0000${s.labels.dp_rank}`) === Number(s.labels.tp_rank);
}

export const sglangMapping: EngineMapping = {
  name: 'sglang',
  families: [
    'sglang:num_running_reqs',
    'sglang:num_queue_reqs',
    'sglang:num_decode_transfer_queue_reqs',
    'sglang:num_prefill_inflight_queue_reqs',
    'sglang:num_prefill_bootstrap_queue_reqs',
    'sglang:num_prefill_prealloc_queue_reqs',
    'sglang:num_decode_prealloc_queue_reqs',
    'sglang:num_requests_total',
    'sglang:num_aborted_requests_total',
    'sglang:generation_tokens_total',
    'sglang:gen_throughput',
    'sglang:token_usage',
    'sglang:num_bootstrap_failed_reqs_total',
    'sglang:num_transfer_failed_reqs_total',
    'sglang:num_retracted_requests_total',
    'sglang:kv_transfer_latency_ms',
    'sglang:kv_transfer_latency_ms_sum',
    'sglang:kv_transfer_latency_ms_count',
    'sglang:queue_time_seconds_sum',
    'sglang:queue_time_seconds_count',
  ],
  labels: ['dp_rank', 'tp_rank', 'priority'],
  detect: (samples) => samples.some((s) => s.name.startsWith('sglang:')),
  map(samples): EngineFields {
    const keep = schedulerSeries(samples);
    const sum = (names: string[]) => sumOf(samples, names, keep);
    return {
      running: sum(['sglang:num_running_reqs']),
      queued: sum(['sglang:num_queue_reqs']),
      transferQueue: add(
        sum(['sglang:num_decode_transfer_queue_reqs']),
        sum(['sglang:num_prefill_inflight_queue_reqs']),
      ),
      // `num_prefill_bootstrap_queue_reqs` replaced `num_prefill_prealloc_queue_reqs` (2025-10).
      preallocQueue: add(
        sum(['sglang:num_prefill_bootstrap_queue_reqs', 'sglang:num_prefill_prealloc_queue_reqs']),
        sum(['sglang:num_decode_prealloc_queue_reqs']),
      ),
      // Finished work only: num_requests_total counts aborted requests too (dashboards compute success as
      // 1 - num_aborted_requests_total / num_requests_total), and an abort produced nothing.
      finishedTotal: finishedWork(
        sum(['sglang:num_requests_total']),
        sum(['sglang:num_aborted_requests_total']),
      ),
      generatedTokensTotal: sum(['sglang:generation_tokens_total']),
      genThroughput: sum(['sglang:gen_throughput']),
      // Usage is per scheduler: the engine's is the fullest rank's, never a sum.
      tokenUsage: maxOf(samples, ['sglang:token_usage'], keep),
      abortedTotal: sum(['sglang:num_aborted_requests_total']),
      kvTransferFailedTotal: add(
        sum(['sglang:num_bootstrap_failed_reqs_total']),
        sum(['sglang:num_transfer_failed_reqs_total']),
      ),
      // The counter only: `sglang:num_retracted_reqs` is a gauge of the last interval's retractions (upstream marks
      // it "TODO maybe remove this old gauge in favor of the new counter"), and a gauge read as a counter makes 48
      // retractions look like 1 (metrics_collector.py@016d860 num_retracted_reqs_total, "The name is `requests`
      // instead of `reqs` to avoid dup name error").
      preemptedTotal: sum(['sglang:num_retracted_requests_total']),
      // A histogram since 2026 (metrics_collector.py@016d860 kv_transfer_latency_ms, observe_kv_transfer_metrics):
      // its sample is `_sum`/`_count`, and the scrape turns their deltas into the interval's mean. Older builds
      // set a gauge of the latest transfer under the bare name.
      kvTransferLatencySumMs: sum(['sglang:kv_transfer_latency_ms_sum']),
      kvTransferLatencyCount: sum(['sglang:kv_transfer_latency_ms_count']),
      kvTransferLatencyMs: maxOf(samples, ['sglang:kv_transfer_latency_ms'], keep),
      // SchedulerMetricsCollector's `queue_time` histogram (sgl-project/sglang python/sglang/srt/metrics/collector.py
      // @93d04878, `sglang:queue_time_seconds`, buckets 0…3000 s), observed by observe_queue_time as a prefill batch
      // takes a request from the waiting queue: its `_count` counts admissions, its `_sum` their waits. The
      // queue_starved judgement (src/core/reduce/objectives.ts) reads both.
      queueTimeSumSeconds: sum(['sglang:queue_time_seconds_sum']),
      queueTimeCount: sum(['sglang:queue_time_seconds_count']),
    };
  },
};

function finishedWork(total: number | undefined, aborted: number | undefined): number | undefined {
  return total === undefined ? undefined : total - (aborted ?? 0);
}
