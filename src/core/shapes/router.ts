// Shapes read from the router's own view: requests it has held too long while others pass (orphans), and requests
// it holds while one PD leg is down or refusing and the other is up (a half-failed pair).
import { stale } from '../state/engine-evidence.js';
import { failThreshold } from '../vocabulary.js';
import type { ClassifierConfig, EngineMemory, TargetState } from '../state/memory.js';
import type { Shape } from './types.js';

/**
 * The router's oldest request in flight older than orphanAfter while completions pass: requests nothing finishes
 * and nothing aborts (the bound is the `gt` of the oldest non-empty age bucket, a lower bound on the age).
 */
export const requestsOrphaned: Shape = (s, now, cfg, ctx) => {
  if (ctx.stuck || !ctx.passing) return undefined;
  for (const r of Object.values(s.engines)) {
    if (r.routerInflight === undefined || stale(r, now, cfg)) continue;
    if ((r.routerInflight ?? 0) <= 0 || (r.routerOldestMs ?? 0) < cfg.detect.orphanAfter) continue;
    return {
      state: 'degraded',
      diagnosis: 'requests_orphaned',
      cause: `${r.service} holds a request in flight for over ${Math.round(r.routerOldestMs! / 1000)} s (${r.routerInflight} in flight) while completions pass: nothing finishes it`,
    };
  }
  return undefined;
};

/** Why a leg counts as down: its scrape fails, or a probe of the endpoint of its name is refused. */
function legDown(
  s: TargetState,
  e: EngineMemory,
  now: number,
  d: ClassifierConfig['detect'],
): string | undefined {
  const refused = Object.values(s.slots).find(
    (m) =>
      m.endpoint === e.service &&
      m.last?.result === 'connect_error' &&
      m.failStreak >= failThreshold(m.probeKind, d),
  );
  if (refused) return 'refusing connections';
  if (e.unknown === true) return 'its /metrics scrape fails';
  if (e.lastSource === 'metrics' && now - e.lastSignalAt >= d.stallAfter) return 'its /metrics went silent';
  return undefined;
}

/**
 * A router with requests in flight for stallAfter, nothing completing, one leg behind it down and another up: the
 * pair is half failed. Without this the leg that waits reads as stalled (a prefill holding transfers for a decode
 * that is gone), which sends the operator to the wrong process.
 */
export const pdPairHalfFailed: Shape = (s, now, cfg, ctx) => {
  if (!ctx.stuck) return undefined;
  const legs = Object.values(s.engines).filter((e) => e.routerInflight === undefined);
  if (legs.length < 2) return undefined;
  const down = legs.map((e) => ({ e, why: legDown(s, e, now, cfg.detect) })).filter((x) => x.why);
  const up = legs.filter((e) => !down.some((d) => d.e === e));
  if (down.length === 0 || up.length === 0) return undefined;
  for (const r of Object.values(s.engines)) {
    if (r.routerInflight === undefined || stale(r, now, cfg) || r.routerLastBusyAt === undefined) continue;
    // Requests in flight at the router lately while nothing completes: it holds what it paired with the leg that is
    // gone. A reading between two held requests may show none, so no unbroken run is asked for, and "lately" is
    // the longer of stallAfter and hangAfter (a probe held to its timeout comes back within it).
    if (now - r.routerLastBusyAt >= Math.max(cfg.detect.stallAfter, cfg.detect.hangAfter)) continue;
    const unhealthy =
      (r.workersUnhealthy ?? 0) > 0 ? `; it reports ${r.workersUnhealthy} worker(s) unhealthy` : '';
    // A line the waiting leg logged about its gone peer (decode's lost prefill connection) says the same: kept.
    const c = s.confirmedCritical;
    const line = c !== undefined ? `; after ${c.rule} on ${c.service}` : '';
    return {
      state: 'wedged',
      diagnosis: 'pd_pair_half_failed',
      cause: `${r.service} holds requests nothing completes (${r.routerInflight} in flight at its last scrape) while ${down.map((d) => `${d.e.service} is down (${d.why})`).join(', ')} and ${up.map((e) => e.service).join(', ')} ${up.length > 1 ? 'are' : 'is'} up${unhealthy}${line}`,
    };
  }
  return undefined;
};
