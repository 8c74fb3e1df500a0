// One timer for every follower polling at the same period. A timer firing costs ~150 µs of CPU on this kind
// of machine (a small VM) whatever its callback does; 50 targets with two log files each, each follower with
// its own 250 ms timer, made 400 wake-ups a second. Sharing one makes it 4.

type Tick = () => void;

/**
 * What a follower polls on: calls `tick` every `ms` until the returned function is called. `onPoll` in
 * production; a test passes one it steps by hand (mtail's injected waker), so no test sleeps for a poll.
 */
export type PollClock = (ms: number, tick: Tick) => () => void;

const clocks = new Map<number, { timer: NodeJS.Timeout; ticks: Set<Tick> }>();

/** Calls `tick` every `ms` on the timer shared by everyone polling at `ms`; returns the function that stops it. */
export function onPoll(ms: number, tick: Tick): () => void {
  let clock = clocks.get(ms);
  if (!clock) {
    const ticks = new Set<Tick>();
    const timer = setInterval(() => {
      // A copy: a tick may stop itself or start another follower.
      for (const t of [...ticks]) t();
    }, ms);
    // Polling never keeps the process alive (as each follower's own timer did not).
    timer.unref();
    clocks.set(ms, (clock = { timer, ticks }));
  }
  const c = clock;
  // A function object per call: one follower subscribing twice holds two subscriptions.
  const sub: Tick = () => tick();
  c.ticks.add(sub);
  return () => {
    if (!c.ticks.delete(sub) || c.ticks.size > 0) return;
    clearInterval(c.timer);
    if (clocks.get(ms) === c) clocks.delete(ms);
  };
}
