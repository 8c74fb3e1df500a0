// Busy is not wedged (EVIDENCE `load`, issue 41 item 9, issue 38): our request waits, but the engine makes tokens —
// it holds work and requests wait for a slot (every slot held by long generations, a queue that grows). That is at
// most a degradation; the symptoms (../symptoms.ts) take such a hang or such timeouts out of the wedge rules, so no
// remediation runs on a busy engine. A client that never reads its stream holds a slot the same way. A starved queue
// (queued work never admitted while what leaves the queue waited under the objective) is not load: the queue does
// not move for our probe, so its hang stays a wedge (queue_starved).
import type { ClassifierConfig, EngineMemory, SlotMemory, TargetMemory } from '../../memory.js';
import type { EngineProgress } from '../../progress-memory.js';
import { oursAt } from '../../memory-read.js';
import { isRouter, readingInterval } from '../../progress-read.js';
import { candidate } from '../pick.js';
import { stallText } from '../text.js';
import type { Family, Hang } from '../types.js';
import { newestHang, newestTimeoutStreak, routerHoldsWork, stoppedText, type Wait } from './progress.js';

/** How recent the engine's last token must be, in reading intervals (and at least SATURATION_RECENT_MS). */
const RECENT_READINGS = 3;
const SATURATION_RECENT_MS = 15_000;

/** Whose requests hold an engine's slots and queue while our completions wait: others', or only our own probes'. */
export interface Busy {
  text: string;
  /** Every running and waiting request may be one of our own probes (none from anyone else need be there). */
  ours: boolean;
  /**
   * Another engine of the target holds work with no progress of its own beside this load: the load explains none of
   * our wait (the wedge rules decide). `stalled` names it; `load` is the loaded engine's part and `text` both.
   */
  beside?: { stalled: string; load: string };
}

/**
 * An engine that makes tokens and has requests waiting, while our completions hang or time out: whose load it is
 * and the cause as text, or undefined. The tokens must have come since the newest hang started (or, for timeouts,
 * recently). Our own completions in flight hold slots and queue places too (issue 38: the example's chat, tool-call,
 * structured and long-input probes fill llama-server's 2 slots with a third waiting): only running + waiting beyond
 * their count is anyone else's load, and one of our probes waiting behind our others is neither saturation nor a
 * wedge. The count is over every engine of the target (a PD pair's probe holds a place on each), so it can only
 * understate others' load on one engine, never invent it.
 *
 * A load explains our waits only while no other engine of the target (a PD pair's other leg, another replica behind
 * the router) holds work with no progress of its own (stalledBeside): a decode saturated by others' load beside a
 * prefill whose bootstrap thread died, or a replica frozen beside a busy one, is a wedge, and the result says both
 * (`beside`). With one engine there is no other, and nothing changes.
 */
export function busyEngine(
  s: TargetMemory,
  now: number,
  cfg: ClassifierConfig,
  hangs: readonly Hang[],
  failing: readonly SlotMemory[],
): Busy | undefined {
  const hung = hangs.filter((h) => h.hung);
  const timedOut = failing.filter((m) => m.last?.result === 'timeout');
  if (hung.length === 0 && timedOut.length === 0) return undefined;
  // Every failing slot must be waiting, not failing otherwise: an error is no queue. A slot whose last run passed is
  // failing only because that pass came over a new connection after a failed reused one (reduce/slots.ts
  // `inconclusive`: llama-server closes the connection after every streamed response): no error either, and read as
  // one it left the real server's saturation wedged (bench:real-llama, wedged/intermittent at 250 s).
  if (failing.some((m) => m.last?.result !== 'timeout' && m.last?.result !== 'ok')) return undefined;
  const since = hung.length > 0 ? Math.min(...hung.map((h) => h.run.startedAt)) : -Infinity;
  const wait = hung.length > 0 ? newestHang(hung) : newestTimeoutStreak(timedOut);
  for (const e of Object.values(s.engines)) {
    const p = e.progress;
    // Tokens known to be made after a time (madeAfter, as reduce/progress.ts and ./progress.ts judge a stall), not
    // when a reading showed them: vLLM's first stats line after a hang reports the 10 s before it, and read by its own
    // time it made a hung engine "saturated, tokens made 0 s ago" for three readings, withholding completions_failing.
    const made = p?.madeAfter;
    if (isRouter(e) || p === undefined || made === undefined) continue;
    // One scrape that timed out under the load is no outage (the busy values are the last reading's). More are, unless
    // the engine's periodic stats line still reports it serving: a loaded engine's /metrics can time out while it
    // works (the scrape waits behind the same API server), and a failed scrape alone is no wedge.
    if (e.queued <= 0 || e.running <= 0) continue;
    if (p.failedScrapes >= 2 && !servingInLog(p)) continue;
    // A starved queue is not a busy one (reduce/objectives.ts judgeStarved): saturation admits from its queue as
    // requests finish, and what it admits has waited; a queue whose leavers waited under the objective while work
    // stayed queued does not move for our probe, and a probe that hangs in it is a wedge (queue_starved).
    if (e.objectives?.starved === true) continue;
    const recent = Math.max(SATURATION_RECENT_MS, RECENT_READINGS * (readingInterval(p) ?? 0));
    if (now - made > recent || made < since) continue;
    const ours = oursAt(s, cfg, e.lastSignalAt);
    const tokens = `tokens made in the last ${Math.round((now - made) / 1000)} s`;
    if (e.running + e.queued <= ours) {
      const load = `${e.service} runs only our own probes (${e.running} running and ${e.queued} waiting, ${ours} of ours in flight), ${tokens}`;
      return besideStall(s, e, now, cfg, wait, load) ?? { ours: true, text: load };
    }
    const load = `${e.service} is saturated: ${e.running} running and ${e.queued} waiting (${ours} of them ours), ${tokens}`;
    return (
      besideStall(s, e, now, cfg, wait, load) ?? {
        ours: false,
        text: `${load}; our completions wait for a slot`,
      }
    );
  }
  return drainedLoad(s, now, cfg, hung, timedOut, wait);
}

/**
 * The load on `loaded` beside another engine's stall (stalledBeside), as a Busy that explains nothing, or undefined
 * when no other engine stalls.
 */
function besideStall(
  s: TargetMemory,
  loaded: EngineMemory,
  now: number,
  cfg: ClassifierConfig,
  wait: Wait | undefined,
  load: string,
): Busy | undefined {
  const stalled = wait !== undefined ? stalledBeside(s, loaded, now, cfg, wait) : undefined;
  if (stalled === undefined) return undefined;
  return {
    ours: false,
    text: `${load}; but ${stalled.text}`,
    beside: { stalled: stalled.service, load },
  };
}

/**
 * Another engine than `loaded` (routers aside, a sleeping one aside) that holds work — running, queued, in transfer or
 * bootstrapping by its last reading that answered, as reduce/progress.ts counts busy readings — and shows no progress
 * of its own while `wait` waits, by the engine-progress stall's own reading (./progress.ts stoppedText: no tokens
 * known to be made since the wait began for hangAfter plus three reading intervals, and its scrapes fail, or no
 * reading came, or its periodic line stopped, or its gauges held that work) or by the gauge stall clock
 * (reduce/engines.ts: `stalled`, work with no progress for stallAfter). No new notion of a stall: those two rules.
 */
function stalledBeside(
  s: TargetMemory,
  loaded: EngineMemory,
  now: number,
  cfg: ClassifierConfig,
  wait: Wait,
): { service: string; text: string } | undefined {
  const routerHolds = routerHoldsWork(s);
  for (const e of Object.values(s.engines)) {
    if (e === loaded || isRouter(e) || e.sleeping === true) continue;
    if (e.running + e.queued + e.transferQueue + e.preallocQueue <= 0) continue;
    const text =
      stoppedText(e, wait, now, cfg.detect.hangAfter, routerHolds) ??
      (e.stalled ? stallText(e, now) : undefined);
    if (text !== undefined) return { service: e.service, text };
  }
  return undefined;
}

/**
 * Timeouts our completions earned waiting in a load that has since drained: every timed-out slot's last run was in
 * flight during the last stretch of readings that showed the engine loaded by others (running and waiting work beyond ours, tokens made).
 * Without this the load's end read as a wedge — the queue empties at once, and the streak of timeouts stands until
 * each slot's next run (bench:detect vllm_saturation: `wedged/completions_failing` for 29 s after the load ended).
 * A slot's next run, passing or not, decides again: a timeout started after the load is evidence as before. A run
 * still in flight that waited in the load gets a few readings to be admitted, no more.
 */
function drainedLoad(
  s: TargetMemory,
  now: number,
  cfg: ClassifierConfig,
  hung: readonly Hang[],
  timedOut: readonly SlotMemory[],
  wait: Wait | undefined,
): Busy | undefined {
  for (const e of Object.values(s.engines)) {
    const l = e.progress?.loaded;
    // A starved queue is no load, drained or not (as above): its hangs and timeouts stay a wedge (queue_starved).
    if (isRouter(e) || l === undefined || e.objectives?.starved === true) continue;
    const waited = timedOut.every(
      (m) => m.last !== undefined && m.last.start <= l.at && l.since <= m.last.start + m.last.durationMs,
    );
    // A run still in flight that waited in the load is being admitted as it drains: for a few readings only.
    const recent = Math.max(SATURATION_RECENT_MS, RECENT_READINGS * (readingInterval(e.progress!) ?? 0));
    // It waited in the load only if the load is known to have made tokens after it started (l.madeAfter, as above):
    // the first stats line after a hang reports the 10 s before it, and the load it shows may be all from before.
    const admitting = hung.every((h) => h.run.startedAt <= (l.madeAfter ?? l.at) && now - l.at <= recent);
    if (!waited || !admitting || l.work <= oursAt(s, cfg, l.at)) continue;
    const load = `${e.service} was saturated ${Math.round((now - l.at) / 1000)} s ago (${l.work} running and waiting)`;
    return (
      besideStall(s, e, now, cfg, wait, load) ?? {
        ours: false,
        text: `${load}; our completions timed out waiting for a slot then`,
      }
    );
  }
  return undefined;
}

/**
 * Whether the engine's periodic stats line (vLLM's `Running: N reqs, Waiting: M reqs` with its throughputs, SGLang's
 * batch lines) reported tokens made since its /metrics began failing: the engine serves, its scrape does not answer.
 * Its running and waiting are then that line's (reduce/engines.ts takes them from either source). Tokens known to be
 * made since (madeAfter, as above), not a line's own time: the first line after the failures began reports the 10 s
 * before it (vLLM's LoggingStatLogger), and read by its time it excused a failing /metrics on tokens from before.
 */
function servingInLog(p: EngineProgress): boolean {
  const since = p.failingSince;
  if (since === undefined) return true;
  return p.lastLineAt !== undefined && p.lastLineAt >= since && (p.madeAfter ?? -Infinity) >= since;
}

export const engineSaturated: Family = (_s, _now, _cfg, sym) =>
  sym.saturated !== undefined ? [candidate('engine_saturated', sym.saturated, { fits: ['degraded'] })] : [];
