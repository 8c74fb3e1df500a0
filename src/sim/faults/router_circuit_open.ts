// The gateway shuts out a worker that serves: its circuit breaker for the worker stays open (mode open: the
// breaker opened on a burst of failed requests and its half-open trial never closes it), or its health checker marks
// the worker unhealthy (mode unhealthy: the router's path to the worker's /health fails, the worker itself answers).
// Every PD request then fails at the router with 503 `No available {role} workers (all circuits open or unhealthy)`
// (lightseekorg/smg model_gateway/src/routers/http/pd_router.rs select_pd_pair, see src/sources/logs/packs/gateway.ts)
// while the engines answer their own /health and run nothing; the router's /metrics says so:
// `smg_worker_cb_state{worker} 1` or `smg_worker_health{worker} 0` (model_gateway/src/observability/metrics.rs).
import type { FaultDef, FaultParams } from './types.js';

const MODES = ['open', 'unhealthy'] as const;

export const routerCircuitOpen: FaultDef = {
  name: 'router_circuit_open',
  summary:
    "the router shuts out a worker that serves: its circuit breaker open (mode open) or its health check failing (mode unhealthy); requests get 503, the engines' own /health 200",
  params: {
    worker: { default: 'decode', help: 'the worker shut out: prefill or decode' },
    mode: { default: 'open', help: `how: ${MODES.join(', ')}` },
  },
  validate(p: FaultParams) {
    if (p.worker !== 'prefill' && p.worker !== 'decode')
      return `worker must be prefill or decode (got ${JSON.stringify(p.worker)})`;
    return (MODES as readonly string[]).includes(String(p.mode))
      ? undefined
      : `mode must be one of ${MODES.join(', ')} (got ${JSON.stringify(p.mode)})`;
  },
  routerShutsOut(role, p) {
    if (role !== p.worker) return undefined;
    return p.mode === 'unhealthy' ? 'unhealthy' : 'open';
  },
};
