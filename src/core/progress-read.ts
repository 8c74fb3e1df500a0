// Reads of the progress memory (src/core/progress-memory.ts) that its reducer (reduce/progress.ts) and the verdict's
// candidates (verdict/candidates/progress.ts, episodes.ts, saturation.ts) share: an engine's reading cadence, whether
// a memory is a router's, and the episode window.
import type { EngineMemory } from './memory.js';
import type { EngineProgress } from './progress-memory.js';

/** How long an episode counts toward a recurrence (ms). */
export const EPISODE_WINDOW_MS = 5 * 60_000;
/** Distinct episodes within the window that make `stalls_recurring`. */
export const EPISODE_COUNT = 3;

/** The median spacing of an engine's readings (ms), or undefined with fewer than two. */
export function readingInterval(p: EngineProgress): number | undefined {
  if (p.seen.length < 2) return undefined;
  const gaps: number[] = [];
  for (let i = 1; i < p.seen.length; i++) gaps.push(p.seen[i]! - p.seen[i - 1]!);
  return median(gaps);
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A router's memory (its mapping sets routerInflight): it holds requests, it makes no tokens. */
export const isRouter = (e: EngineMemory): boolean => e.routerInflight !== undefined;
