import { afterEach, describe, expect, it, vi } from 'vitest';
import { onPoll } from '../../src/sources/logs/tail/poll-clock.js';

describe('poll clock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('followers at one period share one timer; the last one to stop clears it', () => {
    vi.useFakeTimers();
    const a = vi.fn();
    const b = vi.fn();
    const stopA = onPoll(250, a);
    const stopB = onPoll(250, b);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1000);
    expect(a).toHaveBeenCalledTimes(4);
    expect(b).toHaveBeenCalledTimes(4);
    stopA();
    stopA(); // twice is harmless
    vi.advanceTimersByTime(500);
    expect(a).toHaveBeenCalledTimes(4);
    expect(b).toHaveBeenCalledTimes(6);
    expect(vi.getTimerCount()).toBe(1);
    stopB();
    expect(vi.getTimerCount()).toBe(0);
    // Another period is another timer; a new subscriber after the last left starts a new one.
    const stopC = onPoll(100, a);
    const stopD = onPoll(250, b);
    expect(vi.getTimerCount()).toBe(2);
    stopC();
    stopD();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a tick that stops its own follower (or starts another) does not disturb the others in that round', () => {
    vi.useFakeTimers();
    const seen: string[] = [];
    let stopSelf = () => {};
    let stopLate = () => {};
    stopSelf = onPoll(250, () => {
      seen.push('self');
      stopSelf();
      stopLate = onPoll(250, () => seen.push('late'));
    });
    const stopOther = onPoll(250, () => seen.push('other'));
    vi.advanceTimersByTime(250);
    expect(seen).toEqual(['self', 'other']);
    vi.advanceTimersByTime(250);
    expect(seen).toEqual(['self', 'other', 'other', 'late']);
    stopOther();
    stopLate();
    expect(vi.getTimerCount()).toBe(0);
  });
});
