// Mapping fidelity (issue 26, item 4): running, queued, retractions, KV-transfer latency, waiting-by-reason and
// sleep state read as upstream defines them today, from fixtures in current upstream names and labels.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mapEngineMetrics } from '../../src/sources/engines/map.js';
import { parsePrometheusText } from '../../src/sources/engines/promtext.js';

const fixture = (name: string) =>
  mapEngineMetrics(
    parsePrometheusText(readFileSync(new URL(`../fixtures/engines/${name}`, import.meta.url), 'utf8'))
      .samples,
  );
const map = (text: string) => mapEngineMetrics(parsePrometheusText(text).samples);

describe('SGLang, current exposition', () => {
  const f = fixture('sglang-priority-pd.prom');

  it('priority scheduling: the priority="" totals only, not totals plus the per-priority breakdown', () => {
    expect(f.running).toBe(5);
    expect(f.queued).toBe(4);
    expect(f.preallocQueue).toBe(2);
    expect(f.transferQueue).toBe(1);
  });

  it('retractions from the counter, never the per-interval gauge', () => {
    expect(f.preemptedTotal).toBe(48);
    // A build with only the old gauge exports no retraction counter: none is made up from the gauge.
    expect(
      map('sglang:num_retracted_reqs{tp_rank="0"} 3\nsglang:num_running_reqs{tp_rank="0"} 1\n'),
    ).not.toHaveProperty('preemptedTotal');
  });

  it('KV-transfer latency: the histogram sum and count; the old gauge still read where it is the only one', () => {
    expect(f.kvTransferLatencySumMs).toBe(1200);
    expect(f.kvTransferLatencyCount).toBe(40);
    expect(f.kvTransferLatencyMs).toBeUndefined();
    expect(map('sglang:kv_transfer_latency_ms{tp_rank="0"} 12.5\n').kvTransferLatencyMs).toBe(12.5);
  });

  it("token usage is the engine's own max-of-pools figure; failure counters read once", () => {
    expect(f.tokenUsage).toBe(0.62);
    expect(f.kvTransferFailedTotal).toBe(5);
    expect(f.finishedTotal).toBe(93);
    expect(f.abortedTotal).toBe(7);
  });
});

describe('vLLM, current exposition', () => {
  const f = fixture('vllm-pd-consumer.prom');

  it('requests waiting for remote KV (reason="deferred") are the PD queue; capacity waits stay queued', () => {
    expect(f.transferQueue).toBe(2);
    expect(f.queued).toBe(1);
    expect(f.running).toBe(4);
  });

  it("the inter-token latency histogram's _sum and _count (the crawl clock's per-request rate), not its buckets", () => {
    expect(f.interTokenLatencySumSeconds).toBe(49.7);
    expect(f.interTokenLatencyCount).toBe(4900);
  });

  it('sleep state: awake = 1 is not sleeping; awake = 0 on every engine is', () => {
    expect(f.sleeping).toBe(false);
    const asleep = map(
      [
        'vllm:num_requests_running{engine="0"} 0',
        'vllm:engine_sleep_state{engine="0",sleep_state="awake"} 0',
        'vllm:engine_sleep_state{engine="0",sleep_state="weights_offloaded"} 1',
        'vllm:engine_sleep_state{engine="1",sleep_state="awake"} 0',
      ].join('\n'),
    );
    expect(asleep.sleeping).toBe(true);
    const oneAwake = map(
      [
        'vllm:engine_sleep_state{engine="0",sleep_state="awake"} 0',
        'vllm:engine_sleep_state{engine="1",sleep_state="awake"} 1',
      ].join('\n'),
    );
    expect(oneAwake.sleeping).toBe(false);
    // No sleep-state series (an older build): nothing is said about sleep.
    expect(map('vllm:num_requests_running{engine="0"} 1\n')).not.toHaveProperty('sleeping');
  });

  it('NIXL failure and expiry counters, preemptions', () => {
    expect(f).toMatchObject({
      kvTransferFailedTotal: 5,
      kvExpiredTotal: 1,
      preemptedTotal: 6,
      abortedTotal: 4,
    });
  });
});

describe('sgl-model-gateway, PD mode', () => {
  const f = fixture('smg-pd.prom');

  it('the oldest in-flight request is at least the gt of the oldest non-empty age bucket', () => {
    expect(f.routerInflight).toBe(3);
    expect(f.routerOldestInflightMs).toBe(180_000);
    expect(map('smg_http_inflight_request_age_count{gt="0",le="30"} 0\n').routerOldestInflightMs).toBe(0);
  });

  it('workers unhealthy, circuits open and PD KV-transfer failures', () => {
    expect(f).toMatchObject({
      workersHealthy: 1,
      workersUnhealthy: 1,
      circuitOpen: 1,
      kvTransferFailedTotal: 4,
    });
  });
});
