// Stalls that clear by themselves (EVIDENCE `pattern`, issue 41 item 2): completions far outside their own slot's
// latency distribution (reduce/progress.ts onProbeLatency: several times its median and twice its slowest normal
// run, not a fixed hangAfter), each followed by a normal run again, EPISODE_COUNT separate times within
// EPISODE_WINDOW_MS. Episodes on several slots at once are one stall.
import type { Episode } from '../../progress-memory.js';
import { EPISODE_COUNT, EPISODE_WINDOW_MS } from '../../reduce/progress.js';
import { candidate } from '../pick.js';
import type { Family } from '../types.js';

export const stallsRecurring: Family = (s, now) => {
  const eps = (s.progress?.episodes ?? []).filter((e) => e.cleared && now - e.end < EPISODE_WINDOW_MS);
  const stalls = merged(eps);
  if (stalls.length < EPISODE_COUNT) return [];
  const worst = eps.reduce((a, b) => (b.durationMs / b.usualMs > a.durationMs / a.usualMs ? b : a));
  const [probe, endpoint, conn] = worst.slot.split('|');
  return [
    candidate(
      'stalls_recurring',
      `${stalls.length} stalls within ${EPISODE_WINDOW_MS / 60_000} min that cleared by themselves (${stalls.map((x) => `${Math.round((x.end - x.start) / 1000)} s`).join(', ')}); worst: ${probe} on ${endpoint}/${conn} took ${(worst.durationMs / 1000).toFixed(1)} s where it usually takes ${(worst.usualMs / 1000).toFixed(2)} s`,
      { fits: ['degraded'] },
    ),
  ];
};

/** Overlapping episodes (one stall seen by several slots) merged, oldest first. */
function merged(eps: readonly Episode[]): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  for (const e of [...eps].sort((a, b) => a.start - b.start)) {
    const last = out.at(-1);
    if (last !== undefined && e.start <= last.end) last.end = Math.max(last.end, e.end);
    else out.push({ start: e.start, end: e.end });
  }
  return out;
}
