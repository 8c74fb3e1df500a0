// What the core remembers of the engines' own progress and of our requests' latency (issue 41 items 1, 2, 4, 9): when
// each engine last made tokens (counters, a progress line, a moving throughput gauge), how its scrapes fare, when it
// last reported nothing running and nothing waiting, the latency each probe slot usually sees, the episodes far
// outside it, and the requests of ours the engines never reported. Every list is bounded and every entry timed, so a
// reading that stops arriving cannot hold a cause forever. Types only; src/core/reduce/progress.ts changes it.

/** One engine's progress, as its own reports show it (EngineMemory.progress). */
export interface EngineProgress {
  /** When the engine last showed tokens made: a counter moved, a progress line, a throughput gauge that moves. */
  lastTokensAt?: number;
  /**
   * Tokens are known to have been made after this time: the newest `from` of `moves`. A reading that shows tokens made
   * (lastTokensAt) may report tokens made before a hang it comes after; a stall is judged against this one.
   */
  madeAfter?: number;
  /**
   * The readings that showed tokens made, newest last (SEEN_KEEP): made between `from` (the reading of the same source
   * before it: the scrape before, the stats line before) and `at`.
   */
  moves: Array<{ from: number; at: number }>;
  /** The last good reading of the progress counters. */
  lastReadingAt?: number;
  /** The progress counters and gauges of the last good reading (a moving gauge is evidence, a frozen one is not). */
  last?: ProgressReading;
  /** Times of the last few readings of any outcome, newest last (PROGRESS_SEEN_KEEP): the engine's cadence. */
  seen: number[];
  /** The last good metrics reading. */
  lastGoodAt?: number;
  /** Since when every scrape has failed (undefined while the last one answered), and how many. */
  failingSince?: number;
  failedScrapes: number;
  /** Since when every reading has said nothing runs and nothing waits, and how many readings that is. */
  idleSince?: number;
  idleReadings: number;
  /** Since when every reading has claimed running or queued work, and how many readings that is. */
  busySince?: number;
  busyReadings: number;
  /** The engine's queue at the last reading and the smallest it has been in the current busy streak. */
  queued?: number;
  /**
   * The last stretch of readings that showed it loaded (running and waiting work, tokens made): its first and last
   * reading, running + waiting at the last, and whether the newest reading is still in it. `madeAfter`: the last
   * reading's tokens were made after this time (its `from`); a memory from an older version has none.
   */
  loaded?: { since: number; at: number; work: number; loadedNow: boolean; madeAfter?: number };
  /** Periodic stats lines (a log signal that reports the engine's state): when the last came, their spacing. */
  lastLineAt?: number;
  lineEvery?: number;
  lines: number;
}

/** The numbers of one reading that only a working engine changes. */
export interface ProgressReading {
  finished?: number;
  generated?: number;
  steps?: number;
  itlCount?: number;
  genThroughput?: number;
}

/** One completion far outside its slot's own latency, and when it ended. */
export interface Episode {
  slot: string;
  start: number;
  end: number;
  durationMs: number;
  /** What the slot usually takes (the median of its window), for the cause. */
  usualMs: number;
  /** A later run on the slot was back within its usual latency: the episode cleared. */
  cleared: boolean;
}

/** A request of ours the engines never reported while it was in flight (requests_lost). */
export interface LostRequest {
  /** When it was last seen lost, and when the run started. */
  at: number;
  start: number;
  slot: string;
  ageMs: number;
  cause: string;
}

/** The target's latency windows and episodes (TargetMemory.progress). */
export interface TargetProgress {
  /** Per completion slot: the durations of its recent normal runs (ms), oldest first (LATENCY_KEEP). */
  latency: Record<string, number[]>;
  /** Episodes, oldest first, pruned past the episode window. */
  episodes: Episode[];
  /** Requests of ours lost at the engines, oldest first, pruned past the lost window. */
  lost: LostRequest[];
}
