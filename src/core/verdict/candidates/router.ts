// Candidates read from the router's own view (EVIDENCE `router`): requests it holds that no engine works on
// (router_stuck), requests it holds for a PD pair with one leg gone (pd_pair_half_failed), and requests it has held
// too long while others pass (requests_orphaned).
import { stale } from '../../memory-read.js';
import { failThreshold } from '../../vocabulary.js';
import type { ClassifierConfig, EngineMemory, TargetMemory } from '../../memory.js';
import { candidate } from '../pick.js';
import { withSymptom } from '../text.js';
import type { Family } from '../types.js';

/** Whether some engine of the target is a router with requests in flight (routerInflight set) that `ok` accepts. */
export function hasRouter(s: TargetMemory, ok: (r: EngineMemory) => boolean = () => true): boolean {
  for (const r of Object.values(s.engines)) if (r.routerInflight !== undefined && ok(r)) return true;
  return false;
}

/**
 * A router with requests in flight for stallAfter while every engine behind it has run, queued and held nothing
 * for as long: the requests are stuck in the router itself. The cause, or nothing.
 */
export function routerStuck(s: TargetMemory, now: number, cfg: ClassifierConfig): string | undefined {
  // A target with no router holding requests has nothing stuck in one: asked first, the rest is not built (the verdict
  // runs this on every signal; its array chain deoptimized symptomsOf, the verdict's largest function, in every replay).
  if (!hasRouter(s, (r) => r.routerBusySince !== undefined && r.unknown !== true)) return undefined;
  const engines = Object.values(s.engines).filter((e) => e.routerInflight === undefined);
  if (engines.length === 0) return undefined;
  if (engines.some((e) => e.unknown === true || e.idleSince === undefined)) return undefined;
  const idleFor = now - Math.max(...engines.map((e) => e.idleSince!));
  for (const r of Object.values(s.engines)) {
    if (r.routerInflight === undefined || r.routerBusySince === undefined || r.unknown === true) continue;
    const since = Math.min(now - r.routerBusySince, idleFor);
    if (since < cfg.detect.stallAfter) continue;
    return `${r.service} holds ${r.routerInflight} requests in flight while ${engines.map((e) => e.service).join(', ')} run and queue nothing, for ${Math.round(since / 1000)} s`;
  }
  return undefined;
}

/** Why a leg counts as down: its scrape fails, or a probe of the endpoint of its name is refused. */
function legDown(
  s: TargetMemory,
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
 * A router with requests in flight for stallAfter, nothing completing (`stuck`), one leg behind it down and another
 * up: the pair is half failed. The cause naming both legs, or nothing. Without it the leg that waits reads as
 * stalled (a prefill holding transfers for a decode that is gone), which sends the operator to the wrong process.
 */
export function halfFailedPair(
  s: TargetMemory,
  now: number,
  cfg: ClassifierConfig,
  stuck: boolean,
): string | undefined {
  if (!stuck) return undefined;
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
    return `${r.service} holds requests nothing completes (${r.routerInflight} in flight at its last scrape) while ${down.map((d) => `${d.e.service} is down (${d.why})`).join(', ')} and ${up.map((e) => e.service).join(', ')} ${up.length > 1 ? 'are' : 'is'} up${unhealthy}`;
  }
  return undefined;
}

/**
 * The half-failed pair explains the engines' own evidence: the leg that waits for its gone peer holds work with no
 * progress, and its transfers fail. A critical line (decode's lost prefill connection) names it above the pair, with
 * the pair's text as its symptom (./signature.ts).
 */
export const pdPairHalfFailed: Family = (_s, _now, _cfg, sym) =>
  sym.pair !== undefined
    ? [candidate('pd_pair_half_failed', sym.pair, { explains: ['counter', 'engine'] })]
    : [];

/** The router holds requests no engine works on, and nothing passes through it or completions hang (a wedge). */
export const routerStuckCandidate: Family = (_s, _now, _cfg, sym) => {
  if (sym.stuckRouter === undefined || (!sym.stuck && sym.passing.length > 0)) return [];
  return [candidate('router_stuck', withSymptom(sym.wedgeText, sym.stuckRouter), { fits: ['wedged'] })];
};

/**
 * The router's oldest request in flight older than orphanAfter while completions pass: requests nothing finishes
 * and nothing aborts (the bound is the `gt` of the oldest non-empty age bucket, a lower bound on the age).
 */
export const requestsOrphaned: Family = (s, now, cfg, sym) => {
  if (sym.stuck || sym.passing.length === 0) return [];
  for (const r of Object.values(s.engines)) {
    if (r.routerInflight === undefined || stale(r, now, cfg)) continue;
    if ((r.routerInflight ?? 0) <= 0 || (r.routerOldestMs ?? 0) < cfg.detect.orphanAfter) continue;
    return [
      candidate(
        'requests_orphaned',
        `${r.service} holds a request in flight for over ${Math.round(r.routerOldestMs! / 1000)} s (${r.routerInflight} in flight) while completions pass: nothing finishes it`,
      ),
    ];
  }
  return [];
};
