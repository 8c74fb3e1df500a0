// What an engine's objectives remember (issue 41 item 3): its inter-token latency and queue-time objectives —
// configured, or learned from its first healthy window — and the clocks that judge them. Types and constants
// only; src/core/reduce/objectives.ts changes them.

/** Where an objective came from: the config, the engine's first healthy window, or nothing yet (the ceiling). */
export type ObjectiveSource = 'config' | 'learned' | 'ceiling';

/**
 * No healthy window is learned above this inter-token latency (ms): 4 tokens per second per request is slower than
 * anyone reads, so an engine that starts this slow has a crawl, not a baseline (issue 41: a crawl present from
 * start-up at 2 tokens/s was learned as the baseline). A deployment that is this slow by design sets
 * `objectives.interTokenLatency`.
 */
export const ITL_CEILING_MS = 250;
/** A learned inter-token latency objective is this many times the first healthy window's mean. */
export const ITL_SLOWDOWN = 1.5;
/**
 * A missed inter-token latency objective is judged after stallAfter, and never under this (ms): a 1.5× margin is
 * within reach of a loaded host's timer noise for a few seconds (the simulators' tests run stallAfter 3 s), never for
 * half a minute of every sample.
 */
export const SLOW_MIN_MS = 30_000;
/**
 * Our chat probes' rate is judged on the median of their last this-many runs: a probe's 8 tokens are a burst, and on
 * an engine that crawls in steps (a duty cycle, a throttled GPU) one run in a few comes whole inside a fast step and
 * reads healthy; one such run must not stop the clock (issue 38: a 10× crawl read degraded 60 s, then ok mid-crawl).
 */
export const PROBE_RATE_WINDOW = 4;
/**
 * Our chat probes' learned objective is at least this (ms): their rate is timed by us, across the network and our
 * event loop, over an 8-token burst, and on a fast model (5 ms a token on the real llama.cpp fixture) 1.5× is 2–3 ms of
 * jitter — a loaded machine read a healthy server as engine_slow (median 8 ms against 7). 20 ms is 50 tokens/s a
 * stream; a 10× crawl of that model read 29–150 ms.
 */
export const PROBE_ITL_FLOOR_MS = 20;
/** Samples in the first healthy window (one scrape interval or stats line each). */
export const LEARN_SAMPLES = 5;
/** A learned queue-time objective is at least this (ms): an idle engine queues for nothing. */
export const QUEUE_FLOOR_MS = 2_000;
/** …and this many times the first healthy window's mean wait. */
export const QUEUE_SLOWDOWN = 4;
/** No queue-time objective is learned from a window whose mean wait is above this (ms). */
export const QUEUE_CEILING_MS = 30_000;

export interface ObjectiveMemory {
  /** The inter-token latency objective (ms) and where it came from. */
  itlMs: number;
  itlFrom: ObjectiveSource;
  /**
   * The first healthy window while it is being learned: inter-token latencies (ms) of samples within the ceiling. Our
   * probes' objective keeps its last LEARN_SAMPLES runs after it is learned: a quieter window lowers it.
   */
  itlLearning?: number[];
  /** When the objective was learned (unix ms; a stored baseline's own time), while itlFrom is 'learned'. */
  itlLearnedAt?: number;
  /** The last sample's inter-token latency (ms). */
  lastItlMs?: number;
  /** Our probes' objective only: their last PROBE_RATE_WINDOW inter-token latencies (ms), oldest first. */
  recentItlMs?: number[];
  /** Since when every sample has been over the objective (kept across idle gaps between probe runs). */
  slowSince?: number;
  /** The last sample over the objective (a clock with no sample for stallAfter is let go). */
  lastSlowAt?: number;
  /** engine_slow was judged (the objective missed for stallAfter). */
  slow?: boolean;

  /** The queue-time objective (ms) and where it came from. */
  queueMs: number;
  queueFrom: ObjectiveSource;
  queueLearning?: number[];
  /** The queue-time histogram at the last metrics sample (`_sum` seconds, `_count`). */
  lastQueue?: { sum: number; count: number };
  /** Mean wait (ms) of the requests that left the queue (vLLM: finished; SGLang: admitted) in the last interval. */
  lastWaitMs?: number;
  /** Since when the engine has reported queued requests without a break. */
  queueHeldSince?: number;
  /** The engine's counters when the queue began to hold (filled from the first metrics sample after it). */
  atHold?: {
    sum?: number;
    count?: number;
    finished?: number;
    tokens?: number;
    /** Requests running when the queue began to hold; `rebased` once that many finished (judgeStarved). */
    running?: number;
    rebased?: boolean;
  };
  /** queue_starved was judged: the queue held `starveAfter` while requests finished and tokens moved, none admitted. */
  starved?: boolean;
  /** What the starvation judgement saw (for the cause). */
  starvedWhat?: { heldMs: number; finished: number; waitMs: number };
}

/** The objectives a target's config sets (ms); absent ones are learned. */
export interface ObjectiveSettings {
  interTokenLatency?: number;
  queueTime?: number;
}

/** What a restart keeps of an engine (stateDir/baselines.json): its learned objectives and crawl baseline. */
export interface StoredBaseline {
  itlMs?: number;
  queueMs?: number;
  crawlBaseline?: number;
  crawlSamples?: number;
  at: number;
}
