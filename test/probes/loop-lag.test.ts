// Timeouts that give back the time the daemon's own event loop lost (src/lib/loop-lag.ts, issue 41): on the virtual
// clock, with the loop's lateness recorded by hand where the sampler would have seen it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { lagAwareTimeout, LoopLag } from '../../src/lib/loop-lag.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A 30 s timeout started now on a sampler read from the virtual clock: when it fired, and what it gave back. */
function arm(lag: LoopLag, ms = 30_000) {
  const start = Date.now();
  const fired: Array<{ after: number; extended: number }> = [];
  const t = lagAwareTimeout(ms, (extended) => fired.push({ after: Date.now() - start, extended }), lag);
  return { start, fired, t };
}

describe('lag-aware timeouts', () => {
  it('with no lateness it fires on time, as a timer does', () => {
    const lag = new LoopLag(() => Date.now());
    const { fired } = arm(lag);
    vi.advanceTimersByTime(29_999);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([{ after: 30_000, extended: 0 }]);
  });

  it('8 s the loop lost during the wait are given back: it fires at 38 s', () => {
    const lag = new LoopLag(() => Date.now());
    const { start, fired } = arm(lag);
    vi.advanceTimersByTime(10_000);
    // A loaded host: the sampler's timer fired 8 s late, in samples of 2 s.
    for (let k = 0; k < 4; k++) lag.record(start + 10_000 + k * 500, 2_000);
    vi.advanceTimersByTime(20_000);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(8_000);
    expect(fired).toEqual([{ after: 38_000, extended: 8_000 }]);
  });

  it('a block that began before it started counts only from its start', () => {
    const lag = new LoopLag(() => Date.now());
    vi.advanceTimersByTime(5_000);
    const { start, fired } = arm(lag);
    // The loop was blocked from 4 s before the timer to 2 s into it: 2 s of it are the wait's.
    lag.record(start + 2_000, 6_000);
    vi.advanceTimersByTime(31_999);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([{ after: 32_000, extended: 2_000 }]);
  });

  it('lateness before it started, or a few hundred ms of it, extends nothing', () => {
    const lag = new LoopLag(() => Date.now());
    vi.advanceTimersByTime(5_000);
    lag.record(Date.now() - 1_000, 20_000);
    const { start, fired } = arm(lag);
    lag.record(start + 1_000, 200);
    vi.advanceTimersByTime(30_000);
    expect(fired).toEqual([{ after: 30_000, extended: 0 }]);
  });

  it('a timeout never more than doubles, however long the loop was lost (a wedged engine still times out)', () => {
    const lag = new LoopLag(() => Date.now());
    const { start, fired } = arm(lag);
    lag.record(start + 29_000, 29_000);
    vi.advanceTimersByTime(30_000);
    // Lost again during the extension: 1 s more, and nothing past the cap.
    lag.record(start + 45_000, 5_000);
    vi.advanceTimersByTime(29_999);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([{ after: 60_000, extended: 30_000 }]);
  });

  it('time lost during an extension is given back too, up to the cap', () => {
    const lag = new LoopLag(() => Date.now());
    const { start, fired } = arm(lag);
    lag.record(start + 5_000, 4_000);
    vi.advanceTimersByTime(30_000);
    lag.record(start + 32_000, 3_000);
    vi.advanceTimersByTime(4_000);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(3_000);
    expect(fired).toEqual([{ after: 37_000, extended: 7_000 }]);
  });

  it('lostInFirst: the time lost before a moment of the run (its first token), not after it', () => {
    const lag = new LoopLag(() => Date.now());
    const { start, t } = arm(lag);
    // 3 s lost ending 4 s in (the first token read at 4 s), then 5 s more ending 12 s in.
    lag.record(start + 4_000, 3_000);
    lag.record(start + 12_000, 5_000);
    vi.advanceTimersByTime(12_000);
    expect(t.lostInFirst(4_000)).toBe(3_000);
    expect(t.lostInFirst(2_000)).toBe(1_000);
    expect(t.lostMs()).toBe(8_000);
    t.clear();
  });

  it('cleared in time, it never fires', () => {
    const lag = new LoopLag(() => Date.now());
    const { start, fired, t } = arm(lag);
    lag.record(start + 6_000, 5_000);
    vi.advanceTimersByTime(31_000);
    t.clear();
    vi.advanceTimersByTime(60_000);
    expect(fired).toEqual([]);
  });

  it('the sampler records how late its own timer fired, and only samples in the window count', () => {
    const lag = new LoopLag(() => Date.now(), 500);
    lag.start();
    try {
      vi.advanceTimersByTime(2_000);
      expect(lag.lostWithin(0, Date.now())).toBe(0);
      const from = Date.now();
      // A 3 s block of the loop: the next sample fires 3 s late (the virtual clock jumps, the timers after it).
      vi.setSystemTime(Date.now() + 3_000);
      vi.advanceTimersByTime(500);
      expect(lag.lostWithin(from, Date.now())).toBe(3_000);
      expect(lag.lostWithin(Date.now(), Date.now() + 1)).toBe(0);
    } finally {
      lag.stop();
    }
  });
});
