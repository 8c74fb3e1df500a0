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
  let worst: { service: string; failed: number; expired: number; window?: number } | undefined;
  const held =
    s.diagnosis === 'kv_transfer_failing' ||
    (s.incident?.seen ?? []).some((x) => x.diagnosis === 'kv_transfer_failing');
  for (const e of Object.values(s.engines)) {
    // An aborted request fails its KV transfer on purpose (SGLang records "Aborted by AbortReq." as the failure
    // reason, and its failed-request counters count it): the aborts the engine counted are not transfer failures.
    const aborted = failuresWithin(e, 'aborted', now, cfg);
    const failed = Math.max(0, failuresWithin(e, 'kv_transfer_failed', now, cfg) - aborted);
    const expired = failuresWithin(e, 'kv_expired', now, cfg);
    const enters = failed + expired >= cfg.detect.failureCount && recentlyFailing(e, now, cfg);
    if (!enters) {
      // Named: it holds while the rate holds (issue 41 item 8: a 30 % NIXL failure rate let it go between
      // failures, back to ok for 16 s while the path still failed). Before it is named, a burst that stopped is
      // the tail of what happened (the requests stuck in a wedge time out after the restart that fixed it), not a
      // transfer path failing now: the last increase must be recent.
      // Only failures after the target left a wedge hold it: the wedge's own tail (its stuck requests failing
      // their transfers as the restart lets them go) held a fixed target degraded a whole window after it.
      const from = s.incident?.servesSince ?? -Infinity;
      if (!held || !holdsRate(e, now, cfg, from)) continue;
      const n = kvFailuresWithin(e, now, HOLD_WINDOWS * cfg.detect.failureWindow, from);
      if (worst === undefined || n > worst.failed + worst.expired)
        worst = { service: e.service, failed: n, expired: 0, window: HOLD_WINDOWS };
      continue;
    }
    if (worst === undefined || failed + expired > worst.failed + worst.expired)
      worst = { service: e.service, failed, expired };
  }
  if (worst === undefined) return [];
  const what = [
    worst.failed > 0
      ? `${worst.failed} KV transfers failed${worst.window !== undefined ? ' or expired' : ''}`
      : '',
    worst.expired > 0 ? `${worst.expired} requests' KV expired` : '',
  ]
    .filter((x) => x !== '')
    .join(' and ');
  return [
    candidate(
      'kv_transfer_failing',
      `${worst.service}: ${what} within ${Math.round(((worst.window ?? 1) * cfg.detect.failureWindow) / 1000)} s (its own counters)${sym.stuck ? '; completions fail too' : ''}`,
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

/** A named KV failure holds over this many failureWindows (the rate, not the last failure, is judged). */
const HOLD_WINDOWS = 2;

/** KV failures and expiries (aborts discounted) within `window` ms. */
function kvFailuresWithin(e: EngineMemory, now: number, window: number, from = -Infinity): number {
  let kv = 0;
  let aborted = 0;
  for (const r of e.failures?.recent ?? []) {
    if (now - r.at >= window || r.at < from) continue;
    if (r.kind === 'kv_transfer_failed' || r.kind === 'kv_expired') kv += r.n;
    else if (r.kind === 'aborted') aborted += r.n;
  }
  return Math.max(0, kv - aborted);
}

/**
 * A named failure holds while failureCount failures fall within HOLD_WINDOWS × failureWindow and the last is within
 * failureWindow: a steady partial rate keeps it between failures; a path that stopped failing lets it go one
 * failureWindow after its last failure.
 */
function holdsRate(e: EngineMemory, now: number, cfg: ClassifierConfig, from: number): boolean {
  const window = cfg.detect.failureWindow;
  if (kvFailuresWithin(e, now, HOLD_WINDOWS * window, from) < cfg.detect.failureCount) return false;
  return (e.failures?.recent ?? []).some(
    (r) =>
      (r.kind === 'kv_transfer_failed' || r.kind === 'kv_expired') && now - r.at < window && r.at >= from,
  );
}

/** A KV failure or expiry counted within the last quarter of failureWindow. */
function recentlyFailing(e: EngineMemory, now: number, cfg: ClassifierConfig): boolean {
  return (e.failures?.recent ?? []).some(
    (r) =>
      (r.kind === 'kv_transfer_failed' || r.kind === 'kv_expired') &&
      now - r.at < cfg.detect.failureWindow / 4,
  );
}
