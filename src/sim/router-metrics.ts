// The router's /metrics with sgl-model-gateway's smg_* names (src/observability/metrics.rs init_metrics):
// requests in flight per age bucket (`smg_http_inflight_request_age_count`, non-cumulative `gt < age <= le`),
// answered requests by path and status (`smg_http_responses_total`), worker health (`smg_worker_health`, 1 healthy,
// 0 unhealthy) and circuit breakers (`smg_worker_cb_state`, 0 closed, 1 open, 2 half-open), per `worker`
// (lightseekorg/smg model_gateway/src/observability/metrics.rs @2b0d31b init_metrics, set_worker_health,
// set_worker_cb_state).

/** What the router tracks for its /metrics. */
export class RouterStats {
  /** Start time (ms) of each request in flight. */
  readonly inflight = new Set<{ started: number }>();
  /** `path status` → count. */
  readonly responses = new Map<string, number>();

  /** `agedMs`: how long the request has been in flight already (an orphan noticed late). */
  begin(agedMs = 0): { started: number } {
    const r = { started: Date.now() - agedMs };
    this.inflight.add(r);
    return r;
  }

  end(r: { started: number }, path: string, status: number): void {
    if (!this.inflight.delete(r)) return;
    const key = `${path} ${status}`;
    this.responses.set(key, (this.responses.get(key) ?? 0) + 1);
  }
}

const AGE_BUCKETS = [0, 30, 60, 180, 300, 600, 1200, 3600, Infinity];

/** What the router thinks of one worker: its health check passes, its circuit breaker is open. */
export interface WorkerView {
  healthy: boolean;
  circuitOpen: boolean;
}

export function routerMetricsText(
  stats: RouterStats,
  workers: Record<string, WorkerView>,
  now = Date.now(),
): string {
  const out: string[] = ['# TYPE smg_http_inflight_request_age_count gauge'];
  const counts = AGE_BUCKETS.slice(1).map(() => 0);
  for (const r of stats.inflight) {
    const age = (now - r.started) / 1000;
    const i = AGE_BUCKETS.findIndex((le, k) => k > 0 && age <= le) - 1;
    counts[Math.max(0, i)]!++;
  }
  for (let k = 1; k < AGE_BUCKETS.length; k++) {
    const le = AGE_BUCKETS[k] === Infinity ? '+Inf' : String(AGE_BUCKETS[k]);
    out.push(`smg_http_inflight_request_age_count{gt="${AGE_BUCKETS[k - 1]}",le="${le}"} ${counts[k - 1]}`);
  }
  out.push('# TYPE smg_http_responses_total counter');
  for (const [key, n] of stats.responses) {
    const [path, status] = key.split(' ');
    out.push(`smg_http_responses_total{path="${path}",status_code="${status}"} ${n}`);
  }
  out.push('# TYPE smg_worker_health gauge');
  for (const [worker, w] of Object.entries(workers))
    out.push(`smg_worker_health{worker="${worker}"} ${w.healthy ? 1 : 0}`);
  out.push('# TYPE smg_worker_cb_state gauge');
  for (const [worker, w] of Object.entries(workers))
    out.push(`smg_worker_cb_state{worker="${worker}"} ${w.circuitOpen ? 1 : 0}`);
  return out.join('\n') + '\n';
}
