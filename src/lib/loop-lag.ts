// The daemon's own event-loop lateness, for its timeouts (issue 41). A probe or scrape timeout measures how long the
// engine took only while this process could run: on a loaded host (other processes on its cores) or behind a long
// task of its own, a timer fires late and an answer that came in time sits unread in the socket, so the timeout
// measured our slowness, not the engine's. `lagAwareTimeout` fires as a timer does, except that when the loop lost
// time during the wait it first waits that long again (at most the timeout's own length more, so a timeout never
// more than doubles): the engine gets the time the daemon could not give it, and a wedged engine still times out.
// The lateness is sampled by one timer every LAG_SAMPLE_MS that records how late it fired; the same samples feed the
// nodejs_eventloop_lag_* series (src/metrics-runtime.ts subscribes), so the process pays for one timer, not two.
// Bounded: LAG_KEEP samples, the oldest overwritten.

/** How often the loop's lateness is sampled (ms): two cheap timer turns a second (issue 18's budget). */
export const LAG_SAMPLE_MS = 500;
/** Samples kept: 256 at LAG_SAMPLE_MS are 128 s, a 60 s timeout and its longest extension. */
const LAG_KEEP = 256;
/** Lost time below this (ms) extends nothing: a busy turn or two of our own is noise, not a loaded host. */
export const LAG_MIN_EXTENSION_MS = 250;

export class LoopLag {
  private readonly at = new Float64Array(LAG_KEEP);
  private readonly late = new Float64Array(LAG_KEEP);
  private n = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(lateMs: number) => void>();

  constructor(
    /** A monotonic clock (ms); timeouts that use this sampler read the same one. */
    readonly now: () => number = () => performance.now(),
    readonly everyMs = LAG_SAMPLE_MS,
  ) {}

  /** Calls `fn` with each sample's lateness (ms) from now on; returns the unsubscribe. */
  subscribe(fn: (lateMs: number) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Starts sampling (idempotent). The timer never keeps the process alive. */
  start(): void {
    if (this.timer !== undefined) return;
    let expected = this.now() + this.everyMs;
    this.timer = setInterval(() => {
      const t = this.now();
      this.record(t, Math.max(0, t - expected));
      expected = t + this.everyMs;
    }, this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One sample: at `at` the sampling timer fired `lateMs` after it was due. */
  record(at: number, lateMs: number): void {
    const i = this.n++ % LAG_KEEP;
    this.at[i] = at;
    this.late[i] = lateMs;
    for (const fn of this.listeners) fn(lateMs);
  }

  /**
   * The time the loop could not run within (from, to] (ms): each sample's lateness is a block that ended when it
   * fired, and only its part inside the span counts (a block that began before a run started is not the run's).
   */
  lostWithin(from: number, to: number): number {
    let sum = 0;
    for (let k = 0; k < Math.min(this.n, LAG_KEEP); k++) {
      const at = this.at[k]!;
      sum += Math.max(0, Math.min(at, to) - Math.max(at - this.late[k]!, from));
    }
    return sum;
  }
}

let shared: LoopLag | undefined;

/** The process's sampler, started on first use. */
export function processLoopLag(): LoopLag {
  shared ??= new LoopLag();
  shared.start();
  return shared;
}

export interface LagAwareTimeout {
  /** Stops the timer: the operation ended in time. */
  clear(): void;
  /** The time added for the loop's lateness so far (ms). */
  extendedMs(): number;
  /** The time the loop could not run since the timeout was armed (ms). */
  lostMs(): number;
  /** The time the loop could not run in the first `ms` after the timeout was armed (ms). */
  lostInFirst(ms: number): number;
}

/**
 * Calls `onTimeout` once `ms` have passed, plus the time the event loop lost meanwhile (the sampler's lateness within
 * the wait, or this timer's own, whichever is more), capped at `ms` more. Each extension starts from when the timer
 * fired: the loop needs turns to read what arrived while it could not run.
 */
export function lagAwareTimeout(
  ms: number,
  onTimeout: (extendedMs: number) => void,
  lag: LoopLag = processLoopLag(),
): LagAwareTimeout {
  const start = lag.now();
  let granted = 0;
  /** When the armed timer is due, and how late this timer's own firings were in all. */
  let due = start + ms;
  let ownLate = 0;
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    const t = lag.now();
    ownLate += Math.max(0, t - due);
    const owed = Math.min(ms, Math.max(lag.lostWithin(start, t), ownLate)) - granted;
    if (owed >= LAG_MIN_EXTENSION_MS) {
      granted += owed;
      due = t + owed;
      timer = setTimeout(check, owed);
      return;
    }
    timer = undefined;
    onTimeout(granted);
  };
  timer = setTimeout(check, ms);
  return {
    clear: () => {
      clearTimeout(timer);
      timer = undefined;
    },
    extendedMs: () => granted,
    lostMs: () => lag.lostWithin(start, lag.now()),
    lostInFirst: (ms) => lag.lostWithin(start, start + ms),
  };
}
