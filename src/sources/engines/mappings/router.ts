// The SGLang model gateway / router (smg_*, sgl-model-gateway src/observability/metrics.rs, 2025-10 → main
// 2026-08). It has no scheduler: requests active on workers are its load, answered requests its progress.
import type { Sample } from '../promtext.js';
import { sumOf, type EngineMapping, type EngineFields } from './types.js';

/** Paths that are the router's own plumbing, not completions (its health checks, our probes of /health). */
const NOT_WORK =
  /^\/(?:health|health_generate|liveness|readiness|metrics|get_server_info|get_model_info|v1\/models|workers)\b/;

export const routerMapping: EngineMapping = {
  name: 'router',
  families: [
    'smg_worker_health',
    'smg_worker_cb_state',
    'smg_worker_requests_active',
    'smg_http_responses_total',
    'smg_http_inflight_request_age_count',
    'smg_pd_kv_transfer_failures_total',
  ],
  labels: ['status_code', 'status', 'path', 'gt'],
  detect: (samples) => samples.some((s) => s.name.startsWith('smg_')),
  map(samples): EngineFields {
    const workers = samples.filter((s) => s.name === 'smg_worker_health' && Number.isFinite(s.value));
    const breakers = samples.filter((s) => s.name === 'smg_worker_cb_state' && Number.isFinite(s.value));
    return {
      running: sumOf(samples, ['smg_worker_requests_active']),
      // Only answered work: a 2xx on a request path. /health probes and 503s moved nothing.
      finishedTotal: sumOf(
        samples,
        ['smg_http_responses_total'],
        (s) =>
          /^2\d\d$/.test(s.labels.status_code ?? s.labels.status ?? '') &&
          !NOT_WORK.test(s.labels.path ?? ''),
      ),
      // "Worker health status (1=healthy, 0=unhealthy)" and "Circuit breaker state per worker (0=closed, 1=open,
      // 2=half_open)" (lightseekorg/smg model_gateway/src/observability/metrics.rs @2b0d31b init_metrics, the names
      // as in sgl-project/sglang sgl-model-gateway/src/observability/metrics.rs @01b2d83). A worker removed from the
      // gateway keeps both series at -1 (remove_worker_metrics: "Zero for these metrics have special valid meaning,
      // thus we set to -1"): it is gone, neither unhealthy nor shut out, so only 0 and 1 count.
      workersHealthy: workers.length > 0 ? workers.filter((s) => s.value === 1).length : undefined,
      workersUnhealthy: workers.length > 0 ? workers.filter((s) => s.value === 0).length : undefined,
      circuitOpen: breakers.length > 0 ? breakers.filter((s) => s.value === 1).length : undefined,
      // Requests the router holds, whether or not a worker has them: `smg_http_inflight_request_age_count` is
      // "In-flight HTTP requests per age bucket (gt < age <= le, non-cumulative)" (sgl-model-gateway
      // src/observability/metrics.rs init_metrics, Layer 1), so the buckets add up to the in-flight total.
      routerInflight: sumOf(samples, ['smg_http_inflight_request_age_count']),
      routerOldestInflightMs: oldestInflight(samples),
      // "PD KV-transfer failures (missing connector params at decode handoff)" (metrics.rs init_metrics).
      kvTransferFailedTotal: sumOf(samples, ['smg_pd_kv_transfer_failures_total']),
    };
  },
};

/**
 * The lower bound of the oldest in-flight request's age, ms: the `gt` of the oldest age bucket that holds one (the
 * buckets are `gt < age <= le`). Undefined when the router exports no buckets; 0 when none holds a request.
 */
function oldestInflight(samples: Sample[]): number | undefined {
  let any = false;
  let oldest = 0;
  for (const s of samples) {
    if (s.name !== 'smg_http_inflight_request_age_count' || !Number.isFinite(s.value)) continue;
    any = true;
    const gt = Number(s.labels.gt);
    if (s.value > 0 && Number.isFinite(gt)) oldest = Math.max(oldest, gt * 1000);
  }
  return any ? oldest : undefined;
}
