// The engines' own progress and our requests' latency (issue 41 items 1, 2, 4, 9), beside the gauges' stall clock
// (engines.ts): when each engine last made tokens, whatever its gauges claim; how its scrapes and its periodic lines
// fare; how long each probe slot usually takes, and the episodes far outside that; and requests of ours in flight
// while every engine reports nothing running and nothing waiting. The verdict reads them in
// src/core/verdict/candidates/progress.ts, episodes.ts and saturation.ts.
import type { EngineSignal, InflightRun, ProbeResultSignal } from '../signals.js';
import type { ClassifierConfig, EngineMemory, TargetMemory } from '../memory.js';
import type { EngineProgress, ProgressReading, TargetProgress } from '../progress-memory.js';
import { isCompletion } from '../vocabulary.js';
import { EPISODE_WINDOW_MS, isRouter, median, readingInterval } from '../progress-read.js';

/** Readings remembered per engine for its cadence. */
const SEEN_KEEP = 8;
/** Normal runs remembered per slot: its own latency distribution. */
export const LATENCY_KEEP = 20;
/** Normal runs a slot needs before a run can be far outside its distribution. */
export const LATENCY_MIN = 5;
/** An episode is slower than this many times the slot's median… */
const EPISODE_MEDIAN_FACTOR = 5;
/** …and than this many times the slowest normal run in its window… */
const EPISODE_MAX_FACTOR = 2;
/** …and longer than the median by at least this (ms): tens of milliseconds of noise are no episode. */
const EPISODE_FLOOR_MS = 2_000;
const EPISODES_KEEP = 32;
/** A request of ours absent from every engine longer than their reading interval plus this (ms) is lost. */
export const LOST_MARGIN_MS = 5_000;
/** How long a lost request is evidence after it was seen (ms): a diagnosis holds while its evidence does. */
export const LOST_WINDOW_MS = 5 * 60_000;
const LOST_KEEP = 16;
/**
 * The probe kinds whose requests the engines must report while they wait: plain completions. A structured request
 * may wait in a grammar queue, a long prompt in chunked prefill, that no mapping reads as running or waiting.
 */
const PLAIN: ReadonlySet<string> = new Set(['chat', 'canary', 'toolcall']);

export function newEngineProgress(): EngineProgress {
  return { seen: [], moves: [], failedScrapes: 0, idleReadings: 0, busyReadings: 0, lines: 0 };
}

function targetProgress(s: TargetMemory): TargetProgress {
  return (s.progress ??= { latency: {}, episodes: [], lost: [] });
}

/** One engine signal into its progress memory (after engines.ts made the engine's memory). */
export function onEngineProgress(s: TargetMemory, signal: EngineSignal, now: number): void {
  const e = s.engines[signal.service];
  if (e === undefined) return;
  const p = (e.progress ??= newEngineProgress());
  p.seen.push(now);
  if (p.seen.length > SEEN_KEEP) p.seen.shift();
  if (signal.source === 'metrics' && signal.scrapeOk === false) {
    p.failingSince ??= now;
    p.failedScrapes++;
    p.idleSince = undefined;
    p.idleReadings = 0;
    p.busySince = undefined;
    p.busyReadings = 0;
    return;
  }
  let moved: boolean;
  /**
   * The earliest the tokens a reading reports can have been made: its source's reading before it. A reading reports
   * what was made since that one, which can all be from before a hang this reading comes after (vLLM's stats line
   * averages the 10 s since its last log call; a scrape's counters moved since the last scrape).
   */
  let from: number | undefined;
  if (signal.source === 'log') {
    // A line that reports the engine's state (a stats or batch line) is its periodic report.
    from = p.lastLineAt ?? p.lastReadingAt;
    p.lineEvery = p.lastLineAt !== undefined ? now - p.lastLineAt : p.lineEvery;
    p.lastLineAt = now;
    p.lines++;
    moved = signal.progress === true;
  } else {
    from = p.lastGoodAt;
    p.failingSince = undefined;
    p.failedScrapes = 0;
    p.lastGoodAt = now;
    const reading: ProgressReading = {
      finished: signal.finishedTotal,
      generated: signal.generatedTokensTotal,
      steps: signal.decodeStepsTotal,
      itlCount: signal.interTokenLatencyCount,
      genThroughput: signal.genThroughput,
    };
    moved = movedSince(p.last, reading);
    p.last = reading;
  }
  if (moved) {
    p.lastTokensAt = now;
    p.madeAfter = Math.max(p.madeAfter ?? -Infinity, from ?? now);
    p.moves.push({ from: from ?? now, at: now });
    if (p.moves.length > SEEN_KEEP) p.moves.shift();
  }
  p.lastReadingAt = now;
  const work = e.running + e.queued + e.transferQueue + e.preallocQueue;
  if (work === 0) {
    p.idleSince ??= now;
    p.idleReadings++;
    p.busySince = undefined;
    p.busyReadings = 0;
  } else {
    p.busySince ??= now;
    p.busyReadings++;
    p.idleSince = undefined;
    p.idleReadings = 0;
  }
  p.queued = e.queued;
  // A reading of an engine that makes tokens with every slot held and work waiting: its load, remembered past its end
  // (verdict/candidates/saturation.ts: timeouts our probes earned waiting in it are not a wedge once it drains).
  if (e.running > 0 && e.queued > 0 && p.lastTokensAt === now)
    p.loaded = {
      since: p.loaded?.loadedNow === true ? p.loaded.since : now,
      at: now,
      work: e.running + e.queued,
      loadedNow: true,
      madeAfter: from ?? now,
    };
  else if (p.loaded !== undefined) p.loaded.loadedNow = false;
}

/**
 * Tokens made between two readings: a counter went up, or a throughput gauge above zero changed. A gauge that reads
 * the same across scrapes is frozen, not evidence (SGLang refreshes its gauges with each batch line). A counter that
 * went down is a restart, not work done.
 */
function movedSince(a: ProgressReading | undefined, b: ProgressReading): boolean {
  if (a === undefined) return false;
  const up = (x: number | undefined, y: number | undefined) => x !== undefined && y !== undefined && y > x;
  // Finished requests count only where no token counter says more: vLLM counts aborted requests as finished
  // (request_success_total{finished_reason="abort"}), and our own timed-out probes abort on a hung engine.
  if (up(a.generated, b.generated) || (b.generated === undefined && up(a.finished, b.finished))) return true;
  if (up(a.steps, b.steps) || up(a.itlCount, b.itlCount)) return true;
  return b.genThroughput !== undefined && b.genThroughput > 0 && b.genThroughput !== a.genThroughput;
}

/**
 * A finished completion into its slot's latency window: far outside it is an episode (not joining the window, so a
 * stall cannot become the slot's normal); within it, it clears the slot's open episodes.
 */
export function onProbeLatency(
  s: TargetMemory,
  signal: ProbeResultSignal,
  now: number,
  cfg: ClassifierConfig,
): void {
  const kind = cfg.probes[signal.probe]?.kind ?? signal.probeKind;
  if (!isCompletion(kind) || signal.result !== 'ok') return;
  const t = targetProgress(s);
  const slot = `${signal.probe}|${signal.endpoint}|${signal.conn}`;
  const w = (t.latency[slot] ??= []);
  // The engine's time: what the daemon's own event loop lost meanwhile (a loaded host) is ours, and would widen the
  // slot's distribution (a normal run slowed by us raises the threshold past real stalls) or make an episode of it.
  const d = Math.max(0, signal.durationMs - (signal.loopLostMs ?? 0));
  const limit = episodeThreshold(w);
  if (limit !== undefined && d > limit) {
    t.episodes.push({
      slot,
      start: signal.start,
      end: signal.start + signal.durationMs,
      durationMs: d,
      usualMs: median(w),
      cleared: false,
    });
    if (t.episodes.length > EPISODES_KEEP) t.episodes.shift();
  } else {
    for (const ep of t.episodes) if (ep.slot === slot) ep.cleared = true;
    w.push(d);
    if (w.length > LATENCY_KEEP) w.shift();
  }
  pruneProgress(t, now);
}

/** The duration past which a run of this slot is an episode, or undefined while the window is too short. */
export function episodeThreshold(w: readonly number[]): number | undefined {
  if (w.length < LATENCY_MIN) return undefined;
  const m = median(w);
  return Math.max(EPISODE_MEDIAN_FACTOR * m, EPISODE_MAX_FACTOR * Math.max(...w), m + EPISODE_FLOOR_MS);
}

function pruneProgress(t: TargetProgress, now: number): void {
  while (t.episodes.length > 0 && now - t.episodes[0]!.end >= EPISODE_WINDOW_MS) t.episodes.shift();
  while (t.lost.length > 0 && now - t.lost[0]!.at >= LOST_WINDOW_MS) t.lost.shift();
}

/**
 * Requests of ours in flight at the server while every engine (routers aside) has reported nothing running and
 * nothing waiting across two readings since the request started, for longer than their reading interval plus
 * LOST_MARGIN_MS, while an engine made tokens since (it works; it never saw this one). Judged on the innermost
 * hop our completions reach (a request a proxy holds is the path's, keepalive_only), for plain completions only,
 * and before a first token (a request that streams is at the engine).
 */
export function judgeLost(s: TargetMemory, now: number, cfg: ClassifierConfig): void {
  if (s.progress !== undefined) pruneProgress(s.progress, now);
  // Nothing of ours in flight, nothing lost: asked before the engines' list is built (every signal runs this; the
  // list's filter deoptimized it once per replay, whose signals never have a run in flight).
  if (s.inflight === undefined || s.inflight.length === 0) return;
  const engines = Object.values(s.engines).filter((e) => !isRouter(e) && e.progress !== undefined);
  if (engines.length === 0) return;
  const innermost = innermostHop(s, cfg);
  for (const run of s.inflight ?? []) {
    const kind = cfg.probes[run.probe]?.kind;
    if (kind === undefined || !PLAIN.has(kind) || run.firstTokenMs !== undefined) continue;
    if (run.endpoint !== innermost) continue;
    const text = lostText(run, engines, now);
    if (text === undefined) continue;
    const t = targetProgress(s);
    const slot = `${run.probe}|${run.endpoint}|${run.conn}`;
    const seen = t.lost.find((l) => l.slot === slot && l.start === run.startedAt);
    if (seen !== undefined) {
      seen.ageMs = now - run.startedAt;
      seen.at = now;
      seen.cause = text;
      continue;
    }
    t.lost.push({ at: now, start: run.startedAt, slot, ageMs: now - run.startedAt, cause: text });
    if (t.lost.length > LOST_KEEP) t.lost.shift();
  }
}

function lostText(run: InflightRun, engines: EngineMemory[], now: number): string | undefined {
  const age = now - run.startedAt;
  for (const e of engines) {
    const p = e.progress!;
    const every = readingInterval(p);
    if (every === undefined || p.idleSince === undefined || p.failingSince !== undefined) return undefined;
    const from = Math.max(p.idleSince, run.startedAt);
    if (p.seen.filter((x) => x >= from).length < 2) return undefined;
    if (age < every + LOST_MARGIN_MS) return undefined;
    // Tokens made between two readings both after the run started (a reading that moved may count tokens made
    // before it), and a reading after that one still without our request: a reading that only shows the engine
    // resuming (a stall's end, our request about to stream) is not yet a loss.
    const moved = p.moves.find((m) => m.from >= run.startedAt);
    // An engine that made no token at all since the run started may be where it waits, its gauges frozen at
    // nothing: a PD decode leg stalled while prefill still computes our request's first token (decode_stall) is the
    // decode engine's stall, not a request the deployment dropped. Lost needs every engine serving others.
    if (moved === undefined || p.seen.at(-1)! <= moved.at) return undefined;
  }
  const names = engines.map((e) => e.service).join(', ');
  return `${run.probe} on ${run.endpoint}/${run.conn} in flight for ${Math.round(age / 1000)} s with no token while ${names} report${engines.length === 1 ? 's' : ''} nothing running and nothing waiting, and ${engines.length === 1 ? 'it' : 'each'} made tokens since it started: the request never reached the engine's scheduler, or was dropped there`;
}

/** The innermost hop a completion probe is sent to (cfg.hops: outermost first). */
function innermostHop(s: TargetMemory, cfg: ClassifierConfig): string | undefined {
  let best: string | undefined;
  let at = -1;
  const consider = (endpoint: string, kind: string | undefined) => {
    if (!isCompletion(kind)) return;
    const i = cfg.hops.indexOf(endpoint);
    if (i > at) {
      at = i;
      best = endpoint;
    }
  };
  for (const m of Object.values(s.slots)) consider(m.endpoint, m.probeKind);
  for (const r of s.inflight ?? []) consider(r.endpoint, cfg.probes[r.probe]?.kind);
  return best;
}
