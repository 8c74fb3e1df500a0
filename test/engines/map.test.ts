// Engine /metrics mapping (issue 12, item 5): current names first, old names as fallbacks; DP-attention ranks
// all count; vLLM usage is not summed over engines; aborted/errored requests and router /health are not progress.
import { describe, expect, it } from 'vitest';
import { mapEngineMetrics } from '../../src/sources/engines/map.js';
import { parsePrometheusText } from '../../src/sources/engines/promtext.js';

const map = (text: string) => mapEngineMetrics(parsePrometheusText(text).samples);

describe('engine metric mapping', () => {
  it('SGLang DP attention: every dp_rank counts once, plain TP copies once; usage is the fullest rank', () => {
    const dp = map(
      [
        'sglang:num_running_reqs{dp_rank="0",tp_rank="0",engine_type="decode"} 3',
        'sglang:num_running_reqs{dp_rank="1",tp_rank="1",engine_type="decode"} 5',
        'sglang:token_usage{dp_rank="0",tp_rank="0"} 0.3',
        'sglang:token_usage{dp_rank="1",tp_rank="1"} 0.7',
        'sglang:num_aborted_requests_total{dp_rank="0",tp_rank="0"} 4',
        'sglang:num_bootstrap_failed_reqs_total{dp_rank="1",tp_rank="1"} 2',
        'sglang:num_transfer_failed_reqs_total{dp_rank="1",tp_rank="1"} 1',
        'sglang:kv_transfer_latency_ms{dp_rank="1",tp_rank="1"} 12.5',
      ].join('\n'),
    );
    expect(dp).toMatchObject({
      running: 8,
      tokenUsage: 0.7,
      abortedTotal: 4,
      kvTransferFailedTotal: 3,
      kvTransferLatencyMs: 12.5,
    });
    const tp = map('sglang:num_running_reqs{tp_rank="0"} 6\nsglang:num_running_reqs{tp_rank="1"} 6\n');
    expect(tp.running).toBe(6);
    // The newer bootstrap-queue name wins over the older prealloc one when both exist.
    expect(
      map(
        'sglang:num_prefill_bootstrap_queue_reqs 2\nsglang:num_prefill_prealloc_queue_reqs 2\nsglang:num_decode_prealloc_queue_reqs 1\n',
      ).preallocQueue,
    ).toBe(3);
  });

  it('vLLM: counts add over engines, usage is the max; abort/error finishes are not progress', () => {
    const f = map(
      [
        'vllm:num_requests_running{engine="0",model_name="m"} 1',
        'vllm:num_requests_running{engine="1",model_name="m"} 2',
        'vllm:kv_cache_usage_perc{engine="0"} 0.6',
        'vllm:kv_cache_usage_perc{engine="1"} 0.9',
        'vllm:request_success_total{engine="0",finished_reason="stop"} 10',
        'vllm:request_success_total{engine="0",finished_reason="length"} 2',
        'vllm:request_success_total{engine="0",finished_reason="abort"} 7',
        'vllm:request_success_total{engine="1",finished_reason="error"} 3',
        'vllm:num_preemptions_total{engine="0"} 5',
        'vllm:nixl_num_failed_transfers_total{engine="0"} 1',
        'vllm:nixl_num_kv_expired_reqs_total{engine="0"} 4',
      ].join('\n'),
    );
    expect(f).toMatchObject({
      running: 3,
      tokenUsage: 0.9,
      finishedTotal: 12,
      abortedTotal: 7,
      preemptedTotal: 5,
      kvTransferFailedTotal: 1,
      kvExpiredTotal: 4,
    });
    // Old usage name as fallback.
    expect(map('vllm:gpu_cache_usage_perc 0.25\n').tokenUsage).toBe(0.25);
  });

  it('router: /health and 503s are not progress; worker health and open breakers are counted', () => {
    const f = map(
      [
        'smg_worker_requests_active{worker="http://d0"} 4',
        'smg_http_responses_total{path="/v1/chat/completions",status_code="200"} 50',
        'smg_http_responses_total{path="/v1/chat/completions",status_code="503"} 9',
        'smg_http_responses_total{path="/health",status_code="200"} 400',
        'smg_worker_health{worker="http://d0"} 1',
        'smg_worker_health{worker="http://p0"} 0',
        'smg_worker_cb_state{worker="http://p0"} 1',
        'smg_worker_cb_state{worker="http://d0"} 0',
      ].join('\n'),
    );
    expect(f).toMatchObject({
      running: 4,
      finishedTotal: 50,
      workersHealthy: 1,
      workersUnhealthy: 1,
      circuitOpen: 1,
    });
  });
});

describe('engine metric mapping, issue 13', () => {
  it('SGLang: an aborted request is counted by num_requests_total but is not finished work', () => {
    const f = map(
      'sglang:num_requests_total{tp_rank="0"} 500\nsglang:num_aborted_requests_total{tp_rank="0"} 11\n',
    );
    expect(f.finishedTotal).toBe(489);
    expect(map('sglang:num_requests_total{tp_rank="0"} 7\n').finishedTotal).toBe(7);
  });

  it('router: in-flight requests are the sum of smg_http_inflight_request_age_count buckets', () => {
    const f = map(
      [
        'smg_http_inflight_request_age_count{gt="0",le="30"} 2',
        'smg_http_inflight_request_age_count{gt="30",le="60"} 1',
        'smg_http_inflight_request_age_count{gt="60",le="+Inf"} 4',
        'smg_worker_requests_active{worker="http://d0"} 0',
      ].join('\n'),
    );
    expect(f.routerInflight).toBe(7);
    expect(f.running).toBe(0);
    // An engine's scrape has no router in-flight: the detector knows routers by this field.
    expect(map('sglang:num_running_reqs{tp_rank="0"} 1\n').routerInflight).toBeUndefined();
  });

  it('vLLM data parallel: running and generated tokens per engine label, for per-rank stalls', () => {
    const f = map(
      [
        'vllm:num_requests_running{engine="0"} 2',
        'vllm:num_requests_running{engine="1"} 1',
        'vllm:generation_tokens_total{engine="0"} 900',
        'vllm:generation_tokens_total{engine="1"} 40',
      ].join('\n'),
    );
    expect(f.ranks).toEqual({
      '0': { running: 2, generatedTokensTotal: 900 },
      '1': { running: 1, generatedTokensTotal: 40 },
    });
    expect(map('vllm:num_requests_running{engine="0"} 2\n').ranks).toBeUndefined();
  });
});
