// The scrape retains only the families and labels the mappings declare (mappings/*.ts `families`, `labels`):
// every mapping must read the same from those as from the whole body, or a declaration has fallen behind its code.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mapEngineMetrics, SCRAPE_FAMILIES, SCRAPE_LABELS } from '../../src/sources/engines/map.js';
import { ENGINE_MAPPINGS } from '../../src/sources/engines/mappings/index.js';
import { parsePrometheusText } from '../../src/sources/engines/promtext.js';

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/engines/${name}`, import.meta.url), 'utf8');

// Every family each mapping reads, with the labels it filters on, beside families it does not read.
const SGLANG_DP = [
  'sglang:num_running_reqs{model_name="m",dp_rank="0",tp_rank="0"} 3',
  'sglang:num_running_reqs{model_name="m",dp_rank="0",tp_rank="1"} 3',
  'sglang:num_running_reqs{model_name="m",dp_rank="1",tp_rank="2"} 4',
  'sglang:num_queue_reqs{model_name="m",dp_rank="1",tp_rank="2"} 2',
  'sglang:num_decode_transfer_queue_reqs{dp_rank="0",tp_rank="0"} 1',
  'sglang:num_prefill_inflight_queue_reqs{dp_rank="0",tp_rank="0"} 1',
  'sglang:num_prefill_bootstrap_queue_reqs{dp_rank="0",tp_rank="0"} 2',
  'sglang:num_decode_prealloc_queue_reqs{dp_rank="0",tp_rank="0"} 3',
  'sglang:num_requests_total{model_name="m"} 50',
  'sglang:num_aborted_requests_total{model_name="m"} 5',
  'sglang:generation_tokens_total{model_name="m"} 900',
  'sglang:gen_throughput{dp_rank="0",tp_rank="0"} 12.5',
  'sglang:token_usage{dp_rank="0",tp_rank="0"} 0.4',
  'sglang:token_usage{dp_rank="1",tp_rank="2"} 0.7',
  'sglang:num_bootstrap_failed_reqs_total{dp_rank="0",tp_rank="0"} 1',
  'sglang:num_transfer_failed_reqs_total{dp_rank="0",tp_rank="0"} 2',
  'sglang:num_retracted_reqs_total{dp_rank="0",tp_rank="0"} 3',
  'sglang:kv_transfer_latency_ms{dp_rank="0",tp_rank="0"} 17',
  'sglang:cache_hit_rate{dp_rank="0",tp_rank="0"} 0.5',
  'sglang:num_used_tokens{dp_rank="0",tp_rank="0"} 1000',
].join('\n');
const SGLANG_TP = [
  'sglang:num_running_reqs{tp_rank="0"} 2',
  'sglang:num_running_reqs{tp_rank="1"} 2',
  'sglang:num_prefill_prealloc_queue_reqs{tp_rank="0"} 1',
  'sglang:num_retracted_reqs{tp_rank="0"} 4',
].join('\n');
const VLLM = [
  'vllm:num_requests_running{model_name="m",engine="0"} 5',
  'vllm:num_requests_running{model_name="m",engine="1"} 2',
  'vllm:num_requests_waiting{model_name="m",engine="0"} 1',
  'vllm:request_success_total{model_name="m",engine="0",finished_reason="stop"} 10',
  'vllm:request_success_total{model_name="m",engine="0",finished_reason="abort"} 3',
  'vllm:request_success_total{model_name="m",engine="1",finished_reason="error"} 1',
  'vllm:generation_tokens_total{model_name="m",engine="0"} 900',
  'vllm:generation_tokens_total{model_name="m",engine="1"} 100',
  'vllm:gpu_cache_usage_perc{model_name="m",engine="0"} 0.5',
  'vllm:nixl_num_failed_transfers{engine="0"} 2',
  'vllm:nixl_num_kv_expired_reqs_total{engine="0"} 1',
  'vllm:num_preemptions_total{engine="0"} 6',
  'vllm:prompt_tokens_total{model_name="m",engine="0"} 5000',
  'vllm:time_to_first_token_seconds_bucket{model_name="m",engine="0",le="+Inf"} 9',
].join('\n');
const VLLM_NEW = [
  'vllm:kv_cache_usage_perc{engine="0"} 0.25',
  'vllm:nixl_num_failed_transfers_total{engine="0"} 1',
  'vllm:nixl_num_kv_expired_reqs{engine="0"} 2',
  'vllm:num_preemptions{engine="0"} 3',
].join('\n');
const ROUTER = [
  'smg_worker_health{worker="a"} 1',
  'smg_worker_health{worker="b"} 0',
  'smg_worker_cb_state{worker="b"} 1',
  'smg_worker_requests_active{worker="a"} 2',
  'smg_http_responses_total{path="/v1/chat/completions",status_code="200"} 7',
  'smg_http_responses_total{path="/health",status_code="200"} 70',
  'smg_http_responses_total{path="/generate",status="200"} 2',
  'smg_http_inflight_request_age_count{gt="0",le="30"} 3',
].join('\n');

const BODIES: Record<string, string> = {
  'sglang dp': SGLANG_DP,
  'sglang tp': SGLANG_TP,
  vllm: VLLM,
  'vllm newer names': VLLM_NEW,
  router: ROUTER,
  'sglang behind the router': `${SGLANG_TP}\n${ROUTER}`,
  dynamo: fixture('dynamo.prom'),
  llamacpp: fixture('llamacpp.prom'),
  'sglang-router fixture': fixture('sglang-router.prom'),
  tgi: fixture('tgi.prom'),
  'sglang priority PD fixture': fixture('sglang-priority-pd.prom'),
  'vllm PD consumer fixture': fixture('vllm-pd-consumer.prom'),
  'smg PD fixture': fixture('smg-pd.prom'),
};

describe('retained families and labels', () => {
  for (const [name, body] of Object.entries(BODIES)) {
    it(`${name}: the mapping reads the same from the retained samples as from all of them`, () => {
      const all = parsePrometheusText(body);
      const kept = parsePrometheusText(body, { families: SCRAPE_FAMILIES, labels: SCRAPE_LABELS });
      expect(all.bad).toBe(0);
      const fields = mapEngineMetrics(all.samples);
      expect(Object.keys(fields).length).toBeGreaterThan(0);
      expect(mapEngineMetrics(kept.samples)).toEqual(fields);
      // Each mapping on its own too (the sum above could hide one mapping's loss behind another's).
      for (const m of ENGINE_MAPPINGS) {
        if (m.detect(all.samples)) expect(m.map(kept.samples)).toEqual(m.map(all.samples));
      }
    });
  }

  it('declarations: no family twice; the labels retained are the ones the mappings filter on', () => {
    const declared = ENGINE_MAPPINGS.flatMap((m) => m.families);
    expect(new Set(declared).size).toBe(declared.length);
    expect(SCRAPE_LABELS).toEqual(
      new Set([
        'dp_rank',
        'tp_rank',
        'priority',
        'finished_reason',
        'engine',
        'reason',
        'sleep_state',
        'status',
        'status_code',
        'path',
        'gt',
      ]),
    );
  });
});
