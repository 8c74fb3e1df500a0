// The engine's last sign of serving (TargetMemory.servingAt), from the signals that already say so: our completions'
// first tokens and finished runs, and the engines' own progress (a batch line that ran tokens, counters that went
// up). A hang past a critical line confirms it only when nothing served while the run waited (confirm.ts).
import type { TargetMemory } from '../memory.js';

/** The engine showed it serves at `at` (unix ms). */
export function noteServing(s: TargetMemory, at: number): void {
  if (s.servingAt === undefined || at > s.servingAt) s.servingAt = at;
}
