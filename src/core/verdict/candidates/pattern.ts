// Failures that come and go (EVIDENCE `pattern`): more than one streak in a completion slot's window of runs says
// what a single streak cannot. Wedged when most runs fail on every completion slot, degraded otherwise.
import type { ClassifierConfig, SlotMemory } from '../../memory.js';
import { candidate } from '../pick.js';
import { label, why } from '../text.js';
import type { Family } from '../types.js';

/**
 * Failures that never line up into a streak: `intermittentFailures` of a completion slot's last
 * `intermittentWindow` runs failed (degraded). `wedged` when every completion slot's window is mostly failures and
 * passes come in between them (a solid run of failures after passes is a plain wedge, named by the streak).
 */
/**
 * The window's time bound: runs older than this do not count. A slot every 5 m held ten runs over 50 minutes, and
 * failures of a fault long over, restarted since, left the target `intermittent` (issue 38). At the example's
 * cadences (chat 15 s, canary 30 s) ten runs fit well inside it; a slow slot counts the runs of its last 10 minutes.
 */
export const INTERMITTENT_SPAN_MS = 10 * 60_000;

/** A slot's window of runs (1 failed) within INTERMITTENT_SPAN_MS of now. */
export function windowOf(m: SlotMemory, now: number): number[] {
  const r = m.recent ?? [];
  const at = m.recentAt;
  if (at === undefined || at.length !== r.length) return r;
  return r.filter((_, i) => now - at[i]! < INTERMITTENT_SPAN_MS);
}

export function intermittence(
  completion: SlotMemory[],
  cfg: ClassifierConfig,
  now: number,
): { wedged: boolean; text: string } | undefined {
  const d = cfg.detect;
  const win = new Map(completion.map((m) => [m, windowOf(m, now)]));
  const recent = (m: SlotMemory) => win.get(m) ?? [];
  const fails = (m: SlotMemory) => recent(m).reduce((a, b) => a + b, 0);
  // Two or more separate episodes of failure in the window: failures that come and go. One solid streak,
  // recovered or not, is a wedge, judged as failing, and names its own diagnosis.
  const interleaved = (m: SlotMemory) => episodes(recent(m)) >= 2;
  const windowed = completion.filter((m) => recent(m).length > 0);
  const worst = windowed
    .filter(interleaved)
    .reduce<SlotMemory | undefined>((a, m) => (a === undefined || fails(m) > fails(a) ? m : a), undefined);
  if (worst === undefined || fails(worst) < d.intermittentFailures) return undefined;
  const wedged =
    windowed.length === completion.length &&
    windowed.every((m) => fails(m) * 2 > d.intermittentWindow) &&
    windowed.some(interleaved);
  const text = `${label(worst)}: ${fails(worst)} of its last ${recent(worst).length} runs failed${
    worst.last && worst.last.result !== 'ok'
      ? ` (last: ${worst.last.result}${worst.last.error ? `, ${worst.last.error}` : ''})`
      : ''
  }${wedged ? '; most runs fail on every completion slot' : ', with passes in between'}`;
  return { wedged, text };
}

/** Maximal runs of failures (1s) in a window. */
function episodes(r: readonly number[]): number {
  let n = 0;
  for (let i = 0; i < r.length; i++) if (r[i] === 1 && r[i - 1] !== 1) n++;
  return n;
}

/**
 * `intermittent`: a wedge only when the intermittence itself is everywhere (a solid streak on every slot beside a
 * window that merely has episodes is the streak's wedge). Some slot failing outright beside it is named too: the
 * hangs are intermittent, the failing slot is their most visible symptom.
 */
export const intermittent: Family = (_s, _now, _cfg, sym) => {
  const f = sym.flaky;
  if (f === undefined) return [];
  if (f.wedged) return [candidate('intermittent', f.text, { fits: ['wedged'] })];
  const cause = sym.failing.length > 0 ? `${f.text}; ${why(sym.failing[0]!)}` : f.text;
  return [candidate('intermittent', cause, { fits: ['degraded'] })];
};
