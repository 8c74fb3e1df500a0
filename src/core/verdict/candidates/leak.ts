// PD queue entries nothing pops (EVIDENCE `engine`, degraded only: reached while completions pass). The leak floor
// (issue 26): the queues' smallest total since they last held nothing, above zero for leakAfter, whatever the
// traffic; under continuous traffic the engine is never idle, so the older rule (entries held while the engine runs
// nothing, asked after the other degradations as before) never saw a stranded entry, and the floor does.
import { stale } from '../../memory-read.js';
import { candidate } from '../pick.js';
import type { Family } from '../types.js';

export const queueLeakFloor: Family = (s, now, cfg, sym) => {
  if (sym.stuck || sym.passing.length === 0) return [];
  for (const e of Object.values(s.engines)) {
    if (stale(e, now, cfg) || e.queuedSince === undefined || (e.queueFloor ?? 0) <= 0) continue;
    if (now - e.queuedSince < cfg.detect.leakAfter) continue;
    const idle = e.queuedIdleAt !== undefined && now - e.queuedIdleAt < cfg.detect.stallAfter;
    return [
      candidate(
        'queue_leak',
        `${e.service} holds ${e.preallocQueue} bootstrapping and ${e.transferQueue} in-transfer requests, never fewer than ${e.queueFloor} for ${Math.round((now - e.queuedSince) / 60_000)} min, ${idle ? 'while it runs nothing' : 'under traffic'} and completions pass`,
      ),
    ];
  }
  return [];
};

/**
 * PD queues that have held entries for leakAfter while the engine was seen running and queueing nothing in the
 * last stallAfter: the entries are not work waiting, they are leaked slots.
 */
export const queueLeakIdle: Family = (s, now, cfg) => {
  const d = cfg.detect;
  for (const e of Object.values(s.engines)) {
    if (e.unknown === true || e.queuedSince === undefined || e.queuedIdleAt === undefined) continue;
    if (now - e.queuedSince < d.leakAfter || now - e.queuedIdleAt >= d.stallAfter) continue;
    return [
      candidate(
        'queue_leak',
        `${e.service} holds ${e.preallocQueue} bootstrapping and ${e.transferQueue} in-transfer requests for ${Math.round((now - e.queuedSince) / 60_000)} min while it runs nothing and completions pass`,
      ),
    ];
  }
  return [];
};
