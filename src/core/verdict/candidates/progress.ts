// The engine's own progress stopped while our request waits (EVIDENCE `engine`, issue 41 item 1), whatever its gauges
// claim: no reading shows tokens made after a completion of ours started (a reading reports what was made since the
// one before it: progress-memory.ts madeAfter), for more than `hangAfter` plus three of the engine's reading
// intervals, with one more sign that the engine itself stopped — its scrapes fail, its periodic lines stopped, or its
// gauges held the same work (or nothing at all) across the readings. The gauge stall clock (engines.ts) runs only
// while the engine reports work; this one does not need it to. And requests of ours the engines never reported
// while they worked on others (requests_lost, item 4).
import type { EngineMemory, SlotMemory, TargetMemory } from '../../memory.js';
import { isRouter, readingInterval } from '../../progress-read.js';
import { candidate } from '../pick.js';
import { label, withSymptom } from '../text.js';
import type { Candidate, Family, Hang, Symptoms } from '../types.js';

export const engineProgressStopped: Family = (s, now, cfg, sym) => {
  const wait = waiting(sym);
  if (wait === undefined) return [];
  // A port that refuses is a process gone (down, connection_refused), not one that stopped.
  if (sym.slots.some((m) => m.last?.result === 'connect_error')) return [];
  // A stall beside a saturated engine (saturation.ts): the load explains none of our wait, and the engine that made
  // tokens was the loaded one, so the stall need not be everyone's. The text names both.
  if (sym.besideLoad !== undefined)
    return [
      candidate('engine_stalled', withSymptom(sym.wedgeText, sym.besideLoad.text), { fits: ['wedged'] }),
    ];
  const routerHolds = routerHoldsWork(s);
  // One engine that made tokens since our request started says the deployment's loop turns (a PD leg idles
  // while its peer works): the stall must be everyone's.
  const engines = Object.values(s.engines).filter((e) => !isRouter(e));
  // Tokens known to be made after it started (madeAfter): a reading after the request began may report tokens made
  // before it, and before the hang (vLLM's first stats line after a hang averages the 10 s before it).
  if (engines.some((e) => (e.progress?.madeAfter ?? -Infinity) >= wait.start)) return [];
  for (const e of engines) {
    if (e.sleeping === true) continue;
    const text = stoppedText(e, wait, now, cfg.detect.hangAfter, routerHolds);
    if (text !== undefined)
      return [candidate('engine_stalled', withSymptom(sym.wedgeText, text), { fits: ['wedged'] })];
  }
  return [];
};

/** A router of the target reports requests in flight: an idle engine's silence is then the router's doing. */
export const routerHoldsWork = (s: TargetMemory): boolean =>
  Object.values(s.engines).some((e) => isRouter(e) && (e.routerInflight ?? 0) > 0);

/** A request of ours that waits: what it is and since when. */
export interface Wait {
  what: string;
  start: number;
}

/**
 * The request the stall is judged against: the newest completion hung with nothing finished since, else — every
 * slot failing, all by timeouts — the newest of their streaks (each streak's runs waited until they were cut).
 */
function waiting(sym: Symptoms): Wait | undefined {
  if (sym.hungText !== undefined) return newestHang(sym.hangs);
  if (!sym.stuck) return undefined;
  return newestTimeoutStreak(sym.failing);
}

/** The newest completion in flight hangAfter, as a wait (saturation.ts judges a stall beside a load on it too). */
export function newestHang(hangs: readonly Hang[]): Wait | undefined {
  const hung = hangs.filter((h) => h.hung);
  if (hung.length === 0) return undefined;
  const r = hung.reduce((a, b) => (b.run.startedAt > a.run.startedAt ? b : a)).run;
  return { what: `${r.probe} on ${r.endpoint}/${r.conn}`, start: r.startedAt };
}

/** The newest of the failing slots' streaks when every one of them is timeouts, as a wait. */
export function newestTimeoutStreak(failing: readonly SlotMemory[]): Wait | undefined {
  if (failing.length === 0) return undefined;
  if (failing.some((m) => m.last?.result !== 'timeout' || m.failSince === undefined)) return undefined;
  const m = failing.reduce((a, b) => (b.failSince! > a.failSince! ? b : a));
  return { what: `${label(m)} (timing out since)`, start: m.failSince! };
}

/**
 * Why engine `e` shows no progress of its own while `w` waits, or undefined: no tokens known to be made since the wait
 * began, for longer than hangAfter plus three of its reading intervals, with one more sign that it stopped (its
 * scrapes fail, no reading, its periodic line stopped, its gauges held the same work or nothing). Judged per engine:
 * the family above asks it of every engine, saturation.ts of an engine beside a saturated one.
 */
export function stoppedText(
  e: EngineMemory,
  w: Wait,
  now: number,
  hangAfter: number,
  routerHolds: boolean,
): string | undefined {
  const p = e.progress;
  if (p === undefined) return undefined;
  const start = w.start;
  if (p.madeAfter !== undefined && p.madeAfter >= start) return undefined;
  const every = readingInterval(p) ?? p.lineEvery;
  if (every === undefined) return undefined;
  const since = Math.max(p.lastTokensAt ?? -Infinity, p.seen[0] ?? now);
  // A stall that clears within hangAfter plus the readings around it is no stall of the engine: the last reading
  // that moved may be an interval before it began, the first that moves again an interval after it ended.
  if (now - since <= hangAfter + 3 * every) return undefined;
  const quiet = `no progress for ${Math.round((now - since) / 1000)} s while ${w.what} waits`;
  const readingsSince = (from: number) => p.seen.filter((t) => t >= Math.max(from, start)).length;
  if (p.failingSince !== undefined && p.failedScrapes >= 2)
    return `${e.service}: ${quiet}; its /metrics failing for ${Math.round((now - p.failingSince) / 1000)} s (${p.failedScrapes} scrapes)`;
  if (p.lastGoodAt !== undefined && p.lastGoodAt < start && now - p.seen.at(-1)! >= 3 * every)
    return `${e.service}: ${quiet}; no reading of its /metrics for ${Math.round((now - p.seen.at(-1)!) / 1000)} s`;
  // An engine idle by its own reading prints no batch or stats line (SGLang logs a batch only when one ran, vLLM's idle
  // stats at DEBUG): with the router holding our request, its silence is the router's doing (router_stuck).
  const idleBehindRouter = routerHolds && p.idleSince !== undefined;
  if (
    !idleBehindRouter &&
    p.lines >= 2 &&
    p.lineEvery !== undefined &&
    p.lastLineAt! < start &&
    now - p.lastLineAt! >= 3 * p.lineEvery
  )
    return `${e.service}: ${quiet}; its periodic log line stopped ${Math.round((now - p.lastLineAt!) / 1000)} s ago`;
  if (p.busySince !== undefined && readingsSince(p.busySince) >= 2)
    return `${e.service}: ${quiet}; its gauges hold ${e.running} running and ${e.queued} queued across ${p.busyReadings} readings with no token counted`;
  // Nothing running, nothing waiting and no token while our request waits: frozen gauges, or a request that never
  // reached the engine. A router that reports requests in flight says where it waits (router_stuck).
  if (!routerHolds && p.idleSince !== undefined && readingsSince(p.idleSince) >= 2)
    return `${e.service}: ${quiet}; it reports nothing running and nothing waiting across ${p.idleReadings} readings (frozen gauges, or the request never reached it)`;
  return undefined;
}

/** Requests of ours the engines never reported while they made tokens for others (reduce/progress.ts judgeLost). */
export const requestsLost: Family = (s) => {
  const lost = s.progress?.lost ?? [];
  if (lost.length === 0) return [];
  const last = lost.at(-1)!;
  const more = lost.length > 1 ? `; ${lost.length} such requests within 5 min` : '';
  return [candidate('requests_lost', `${last.cause}${more}`)] satisfies Candidate[];
};
