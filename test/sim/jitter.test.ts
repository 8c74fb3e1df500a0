// --jitter: the per-step factor's spread, its drift between steps, and replay by seed (an injected clock).
import { describe, expect, it } from 'vitest';
import { parseJitter } from '../../src/commands/sim.js';
import { stepJitter } from '../../src/sim/jitter.js';

function logSd(xs: number[]): number {
  const l = xs.map(Math.log);
  const m = l.reduce((a, b) => a + b, 0) / l.length;
  return Math.sqrt(l.reduce((a, b) => a + (b - m) ** 2, 0) / (l.length - 1));
}

describe('stepJitter', () => {
  it('is exactly 1 with sd 0', () => {
    const j = stepJitter({ sd: 0 });
    expect([j(), j(), j()]).toEqual([1, 1, 1]);
  });

  it('replays by seed and spreads by about sd per part', () => {
    let t = 0;
    const now = () => (t += 10_000); // steps far apart: the drift is fresh each time
    const a = stepJitter({ sd: 0.05, seed: 7, now });
    const xs = Array.from({ length: 4000 }, a);
    t = 0;
    const b = stepJitter({ sd: 0.05, seed: 7, now });
    expect(Array.from({ length: 4000 }, b)).toEqual(xs);
    // Independent slow and fast parts: log-sd sqrt(2) · 0.05.
    expect(logSd(xs)).toBeGreaterThan(0.065);
    expect(logSd(xs)).toBeLessThan(0.077);
  });

  it('drifts slowly: steps 1 ms apart share the slow part, so their spread is the fast part alone', () => {
    let t = 0;
    const j = stepJitter({ sd: 0.05, seed: 11, now: () => (t += 1) });
    const xs = Array.from({ length: 400 }, j);
    // Within 0.4 s of a 1 s drift, the slow part barely moves: the spread is about the per-step 0.05.
    expect(logSd(xs)).toBeGreaterThan(0.04);
    expect(logSd(xs)).toBeLessThan(0.06);
  });
});

describe('sim --jitter', () => {
  it('takes a log-sd from 0 to 1 and an integer seed', () => {
    expect(parseJitter('0.03', undefined)).toEqual({ sd: 0.03 });
    expect(parseJitter('0', '29')).toEqual({ sd: 0, seed: 29 });
    expect(() => parseJitter('5%', undefined)).toThrow(/--jitter: expected a number from 0 to 1/);
    expect(() => parseJitter('1.5', undefined)).toThrow(/--jitter/);
    expect(() => parseJitter('0.1', '-3')).toThrow(/--jitter-seed/);
  });
});
