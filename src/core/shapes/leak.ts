// The leak floor of the PD queues (issue 26): their smallest total since they last held nothing, above zero for
// leakAfter, whatever the traffic. Under continuous traffic the engine is never idle, so the older rule (entries
// held while the engine runs nothing) never saw a stranded entry; the floor does: an entry nothing pops keeps the
// queue from ever reaching zero.
import { stale } from '../state/engine-evidence.js';
import type { Shape } from './types.js';

export const queueLeakFloor: Shape = (s, now, cfg, ctx) => {
  if (ctx.stuck || !ctx.passing) return undefined;
  for (const e of Object.values(s.engines)) {
    if (stale(e, now, cfg) || e.queuedSince === undefined || (e.queueFloor ?? 0) <= 0) continue;
    if (now - e.queuedSince < cfg.detect.leakAfter) continue;
    const idle = e.queuedIdleAt !== undefined && now - e.queuedIdleAt < cfg.detect.stallAfter;
    return {
      state: 'degraded',
      diagnosis: 'queue_leak',
      cause: `${e.service} holds ${e.preallocQueue} bootstrapping and ${e.transferQueue} in-transfer requests, never fewer than ${e.queueFloor} for ${Math.round((now - e.queuedSince) / 60_000)} min, ${idle ? 'while it runs nothing' : 'under traffic'} and completions pass`,
    };
  }
  return undefined;
};
