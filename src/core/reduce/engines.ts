// The engine case of the reducer: scraped and logged busy values, the stall clock per engine and per data-parallel
// rank, and the PD queue and idle clocks the verdict reads (router_stuck, kv_transfer_leak).
import type { EngineSignal, RankSample } from '../signals.js';
import { onEngineEvidence, onRankEvidence } from './engine-evidence.js';
import { noteServing } from './serving.js';
import { seedBaseline } from './objectives.js';
import { isRouter } from '../progress-read.js';

/** Readings of the running count kept per engine: enough to cover a probe run (objectives.ts othersBeside). */
const RECENT_RUNNING = 8;
import type { ClassifierConfig, DetectEvent, EngineMemory, TargetMemory } from '../memory.js';

export function onEngine(s: TargetMemory, signal: EngineSignal, now: number, cfg: ClassifierConfig): void {
  const e = (s.engines[signal.service] ??= newEngine(s, signal.service, now, cfg));
  if (signal.source === 'metrics' && signal.scrapeOk === false) {
    // Busy values from before the failure say nothing now: no stall is judged on them.
    e.unknown = true;
    return;
  }
  // The stall clock restarts when the busy state is known again, so a scrape outage is not a stall.
  if (busyUnknown(e, now, cfg)) e.lastProgressAt = now;
  e.unknown = false;
  e.lastSource = signal.source;
  let progress: boolean;
  if (signal.source === 'log') {
    // Progress means tokens: a batch line that ran a batch says so (engine-lines.ts), a stats line with
    // `0.0 tokens/s` or a batch with no generated tokens does not, and any other line (a rule's extracted
    // gauge) is no evidence at all. Before issue 13 every such line restarted the stall clock.
    progress = signal.progress === true;
  } else {
    // Counters that went up: a drop is a restart (its counters start over), not work done.
    const moved = (a: number | undefined, b: number | undefined) =>
      a !== undefined && b !== undefined && a > b;
    progress =
      moved(signal.finishedTotal, e.finishedTotal) ||
      moved(signal.generatedTokensTotal, e.generatedTokensTotal) ||
      moved(signal.decodeStepsTotal, e.decodeStepsTotal);
    if (signal.finishedTotal !== undefined) e.finishedTotal = signal.finishedTotal;
    if (signal.decodeStepsTotal !== undefined) e.decodeStepsTotal = signal.decodeStepsTotal;
    if (signal.generatedTokensTotal !== undefined) e.generatedTokensTotal = signal.generatedTokensTotal;
  }
  if (signal.running !== undefined) {
    e.running = signal.running;
    if (!isRouter(e)) {
      const recent = (e.recentRunning ??= []);
      recent.push([now, signal.running]);
      if (recent.length > RECENT_RUNNING) recent.shift();
    }
  }
  if (signal.queued !== undefined) e.queued = signal.queued;
  if (signal.transferQueue !== undefined) e.transferQueue = signal.transferQueue;
  if (signal.preallocQueue !== undefined) e.preallocQueue = signal.preallocQueue;
  // Tokens made: the engine serves. A scrape's counters moved some time since the scrape before: credited then, the
  // earliest (a thread that died just after the last completions must not look alive a scrape later).
  if (progress) noteServing(s, signal.source === 'log' ? now : e.lastSignalAt);
  e.lastSignalAt = now;
  if (progress) e.lastProgressAt = now;
  if (signal.routerInflight !== undefined) {
    e.routerInflight = signal.routerInflight;
    e.routerBusySince = signal.routerInflight > 0 ? (e.routerBusySince ?? now) : undefined;
    if (signal.routerInflight > 0) e.routerLastBusyAt = now;
  }
  trackQueues(e, now);
  onEngineEvidence(e, signal, now, cfg);
  for (const [id, r] of Object.entries(signal.ranks ?? {})) trackRank(e, id, r, now, cfg);
}

/** An engine first heard from: a baseline a restart kept for it seeds its objectives and crawl baseline. */
function newEngine(s: TargetMemory, service: string, now: number, cfg: ClassifierConfig): EngineMemory {
  const e: EngineMemory = {
    service,
    running: 0,
    queued: 0,
    transferQueue: 0,
    preallocQueue: 0,
    lastSignalAt: now,
    lastProgressAt: now,
    stalled: false,
  };
  const seed = s.baselineSeeds?.[service];
  if (seed !== undefined) {
    seedBaseline(e, seed, cfg);
    delete s.baselineSeeds![service];
  }
  return e;
}

/**
 * The busy values are stale: the last scrape failed, or scrapes stopped arriving (a scraped engine reports
 * every few seconds; log-only engines are silent while stalled, so silence there is the evidence).
 */
function busyUnknown(e: EngineMemory, now: number, cfg: ClassifierConfig): boolean {
  return e.unknown === true || (e.lastSource === 'metrics' && now - e.lastSignalAt >= cfg.detect.stallAfter);
}

export function judgeEngines(
  s: TargetMemory,
  now: number,
  cfg: ClassifierConfig,
  events: DetectEvent[],
): void {
  for (const e of Object.values(s.engines)) {
    const unknown = busyUnknown(e, now, cfg);
    // A sleeping engine (vLLM sleep mode) holds what it holds on purpose: no stall, and the clock starts on waking.
    const asleep = e.sleeping === true;
    const busy = !unknown && !asleep && e.running + e.queued + e.transferQueue + e.preallocQueue > 0;
    // An idle engine is not stalled, and the stall clock starts when it gets work.
    if (!busy && !unknown) e.lastProgressAt = Math.max(e.lastProgressAt, asleep ? now : e.lastSignalAt);
    const stalled = busy && now - e.lastProgressAt >= cfg.detect.stallAfter;
    if (stalled && !e.stalled) {
      events.push({
        type: 'engine_stalled',
        at: now,
        service: e.service,
        running: e.running,
        queued: e.queued,
        transferQueue: e.transferQueue,
        preallocQueue: e.preallocQueue,
        sinceMs: now - e.lastProgressAt,
      });
    } else if (!stalled && e.stalled && !unknown) {
      events.push({ type: 'engine_progress', at: now, service: e.service });
    }
    e.stalled = stalled;
  }
}

/** The leak and idle clocks: how long the PD queues have held entries, and how long the engine has been idle. */
function trackQueues(e: EngineMemory, now: number): void {
  const work = e.running + e.queued;
  const pd = e.transferQueue + e.preallocQueue;
  if (pd > 0) {
    // The floor: the smallest the PD queues have been since they last held nothing. Above zero for leakAfter,
    // whatever the traffic, some entries were never popped.
    e.queueFloor = e.queuedSince === undefined ? pd : Math.min(e.queueFloor ?? pd, pd);
    e.queuedSince ??= now;
    if (work === 0) e.queuedIdleAt = now;
  } else {
    e.queuedSince = undefined;
    e.queuedIdleAt = undefined;
    e.queueFloor = undefined;
  }
  e.idleSince = work + pd === 0 ? (e.idleSince ?? now) : undefined;
}

function trackRank(e: EngineMemory, id: string, r: RankSample, now: number, cfg: ClassifierConfig): void {
  const m = ((e.ranks ??= {})[id] ??= { running: 0, lastSignalAt: now, lastProgressAt: now, stalled: false });
  const tokens =
    r.progress ??
    (r.generatedTokensTotal !== undefined &&
      m.generatedTokensTotal !== undefined &&
      r.generatedTokensTotal > m.generatedTokensTotal);
  if (r.generatedTokensTotal !== undefined) m.generatedTokensTotal = r.generatedTokensTotal;
  if (r.running !== undefined) m.running = r.running;
  m.lastSignalAt = now;
  if (tokens) m.lastTokensAt = now;
  // An idle rank is not stalled: its clock starts when it gets work.
  if (tokens || m.running === 0) m.lastProgressAt = now;
  onRankEvidence(m, r, now, cfg);
}

/**
 * One rank holding work with no tokens for stallAfter while a sibling produced tokens within it: that rank is
 * stuck on its own (the engine as a whole progresses, so the engine stall never fires). A rank that stopped
 * reporting is unknown, not stalled: the engine-level judgement covers silence.
 */
export function judgeRanks(s: TargetMemory, now: number, cfg: ClassifierConfig, events: DetectEvent[]): void {
  const after = cfg.detect.stallAfter;
  for (const e of Object.values(s.engines)) {
    const ranks = Object.entries(e.ranks ?? {});
    if (ranks.length < 2) continue;
    for (const [id, r] of ranks) {
      const reporting = now - r.lastSignalAt < after;
      const siblingWorks = ranks.some(
        ([other, o]) => other !== id && o.lastTokensAt !== undefined && now - o.lastTokensAt < after,
      );
      const stalled =
        reporting &&
        !busyUnknown(e, now, cfg) &&
        r.running > 0 &&
        now - r.lastProgressAt >= after &&
        siblingWorks;
      if (stalled && !r.stalled) {
        events.push({
          type: 'rank_stalled',
          at: now,
          service: e.service,
          rank: id,
          running: r.running,
          sinceMs: now - r.lastProgressAt,
        });
      }
      r.stalled = stalled;
    }
  }
}
