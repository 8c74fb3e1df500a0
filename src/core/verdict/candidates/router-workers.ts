// The router's own view of its workers as evidence (issue 41 item 6, EVIDENCE `router`): circuit breakers it holds
// open and workers its health checker marks unhealthy (sgl-model-gateway `smg_worker_cb_state`,
// `smg_worker_health`; src/sources/engines/mappings/router.ts reads them). They name the failure only when the
// engines behind the router are fine by their own evidence — each answers its direct probes (a health or completion
// probe of the endpoint of its name passes, none fails) and its /metrics scrape is fresh — while completions
// through the router fail or hang: the router shuts out workers that serve. When an engine itself fails, the router's
// breaker opening is its consequence, and the engine's evidence (refused port, half-failed pair, stall) names it.
import { stale } from '../../memory-read.js';
import type { ClassifierConfig, EngineMemory, TargetMemory } from '../../memory.js';
import { failThreshold } from '../../vocabulary.js';
import { candidate } from '../pick.js';
import { hasRouter } from './router.js';
import type { Family, Symptoms } from '../types.js';

/** Why an engine behind the router is not known fine, or undefined when it answers directly and reports in time. */
function notFine(s: TargetMemory, e: EngineMemory, now: number, cfg: ClassifierConfig): string | undefined {
  if (stale(e, now, cfg)) return 'its /metrics scrape fails or went silent';
  const direct = Object.values(s.slots).filter((m) => m.endpoint === e.service && m.last !== undefined);
  if (direct.length === 0) return 'nothing probes it directly';
  const failing = direct.find((m) => m.last!.result !== 'ok' && m.failStreak >= 1);
  if (failing !== undefined) return `${failing.probe} on it fails`;
  if (!direct.some((m) => m.last!.result === 'ok' && m.failStreak === 0))
    return 'no direct probe of it passes';
  return undefined;
}

/** Completions through `router` fail (a streak) or hang: the router is where requests stop. */
function routerFails(router: string, sym: Symptoms, cfg: ClassifierConfig): boolean {
  return (
    sym.hangs.some((h) => h.hung && h.run.endpoint === router) ||
    sym.completion.some(
      (m) => m.endpoint === router && m.failStreak >= failThreshold(m.probeKind, cfg.detect),
    )
  );
}

/**
 * The cause when a router shuts out workers that answer directly while completions through it fail, else
 * undefined. Open circuits first: a breaker opens on failed requests and stays open whatever the health checks say.
 */
export function routerShutsOut(
  s: TargetMemory,
  now: number,
  cfg: ClassifierConfig,
  sym: Symptoms,
): { diagnosis: 'router_circuit_open' | 'router_workers_unhealthy'; cause: string } | undefined {
  // No router, nothing shut out: asked first (see routerStuck).
  if (!hasRouter(s)) return undefined;
  const legs = Object.values(s.engines).filter((e) => e.routerInflight === undefined);
  if (legs.length === 0) return undefined;
  for (const r of Object.values(s.engines)) {
    if (r.routerInflight === undefined || stale(r, now, cfg)) continue;
    const open = r.circuitOpen ?? 0;
    const unhealthy = r.workersUnhealthy ?? 0;
    if (open === 0 && unhealthy === 0) continue;
    if (!routerFails(r.service, sym, cfg)) continue;
    if (legs.some((e) => notFine(s, e, now, cfg) !== undefined)) continue;
    const fine = `${legs.map((e) => e.service).join(', ')} answer${legs.length === 1 ? 's' : ''} directly and report progress`;
    return open > 0
      ? {
          diagnosis: 'router_circuit_open',
          cause: `${r.service} holds ${open} worker circuit breaker(s) open (smg_worker_cb_state 1) and completions through it fail, while ${fine}`,
        }
      : {
          diagnosis: 'router_workers_unhealthy',
          cause: `${r.service} marks ${unhealthy} worker(s) unhealthy (smg_worker_health 0) and completions through it fail, while ${fine}`,
        };
  }
  return undefined;
}

export const routerWorkers: Family = (s, now, cfg, sym) => {
  const shut = routerShutsOut(s, now, cfg, sym);
  return shut !== undefined ? [candidate(shut.diagnosis, shut.cause)] : [];
};
