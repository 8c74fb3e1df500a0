// A poll clock that only ticks when the test says so (mtail's injected test waker): a test that needs "a
// poll happened between these two writes" steps one, instead of sleeping and hoping a timer fired.
import type { PollClock } from '../../src/sources/logs/tail/poll-clock.js';

export interface SteppedPoll {
  /** Pass as `follow.poll` (or a follower's `poll`). */
  readonly poll: PollClock;
  /** Runs one poll of every subscribed follower, synchronously. */
  step(times?: number): void;
  /** Followers currently subscribed. */
  readonly subscribers: number;
}

export function steppedPoll(): SteppedPoll {
  const ticks = new Set<() => void>();
  return {
    poll: (_ms, tick) => {
      const sub = () => tick();
      ticks.add(sub);
      return () => void ticks.delete(sub);
    },
    step(times = 1) {
      for (let i = 0; i < times; i++) for (const t of [...ticks]) t();
    },
    get subscribers() {
      return ticks.size;
    },
  };
}
