// Candidates named by the engine's own failure counters (their increases within failureWindow, engine-evidence.ts):
// KV transfers failing (EVIDENCE `counter`), and aborts beyond the ones our own timed-out probes caused (`load`).
import { failuresWithin, ownCutsWithin } from '../../memory-read.js';
import type { ClassifierConfig, EngineMemory } from '../../memory.js';
import { candidate } from '../pick.js';
import type { Family } from '../types.js';

/**
 * KV transfers failed or expired `failureCount` times within failureWindow on one service (SGLang
 * num_bootstrap_failed_reqs_total + num_transfer_failed_reqs_total, vLLM nixl_num_failed_transfers +
 * nixl_num_kv_expired_reqs, the router's smg_pd_kv_transfer_failures_total). A transfer that fails is retried or
 * recomputed, so completions may still pass: degraded then, wedged when they fail too.
 */
export const kvTransferFailing: Family = (s, now, cfg, sym) => {
  let worst: { service: string; failed: number; expired: number } | undefined;
  for (const e of Object.values(s.engines)) {
    // An aborted request fails its KV transfer on purpose (SGLang records "Aborted by AbortReq." as the failure
    // reason, and its failed-request counters count it): the aborts the engine counted are not transfer failures.
    const aborted = failuresWithin(e, 'aborted', now, cfg);
    const failed = Math.max(0, failuresWithin(e, 'kv_transfer_failed', now, cfg) - aborted);
    const expired = failuresWithin(e, 'kv_expired', now, cfg);
    if (failed + expired < cfg.detect.failureCount) continue;
    // Still failing: the last increase is recent. A burst that stopped is the tail of what happened (the requests
    // stuck in a wedge time out after the restart that fixed it), not a transfer path failing now.
    if (!recentlyFailing(e, now, cfg)) continue;
    if (worst === undefined || failed + expired > worst.failed + worst.expired)
      worst = { service: e.service, failed, expired };
  }
  if (worst === undefined) return [];
  const what = [
    worst.failed > 0 ? `${worst.failed} KV transfers failed` : '',
    worst.expired > 0 ? `${worst.expired} requests' KV expired` : '',
  ]
    .filter((x) => x !== '')
    .join(' and ');
  return [
    candidate(
      'kv_transfer_failing',
      `${worst.service}: ${what} within ${Math.round(cfg.detect.failureWindow / 1000)} s (its own counters)${sym.stuck ? '; completions fail too' : ''}`,
    ),
  ];
};

/**
 * Aborts the engines counted beyond our own probes' (each timed-out completion run aborted once at every engine it
 * reached): abortStormCount within failureWindow is an abort storm even with no abort lines in a log. The most any
 * one engine counted, not the sum: a PD request aborts on both legs.
 */
export const abortCounters: Family = (s, now, cfg, sym) => {
  if (sym.stuck) return [];
  const own = ownCutsWithin(s, now, cfg);
  let worst: { service: string; n: number } | undefined;
  for (const e of Object.values(s.engines)) {
    const n = failuresWithin(e, 'aborted', now, cfg) - own;
    if (n >= cfg.detect.abortStormCount && (worst === undefined || n > worst.n))
      worst = { service: e.service, n };
  }
  if (worst === undefined) return [];
  return [
    candidate(
      'abort_storm',
      `${worst.service} counted ${worst.n} aborted requests within ${Math.round(cfg.detect.failureWindow / 1000)} s beyond our own probes' ${own}`,
    ),
  ];
};

/** A KV failure or expiry counted within the last quarter of failureWindow. */
function recentlyFailing(e: EngineMemory, now: number, cfg: ClassifierConfig): boolean {
  return (e.failures?.recent ?? []).some(
    (r) =>
      (r.kind === 'kv_transfer_failed' || r.kind === 'kv_expired') &&
      now - r.at < cfg.detect.failureWindow / 4,
  );
}
