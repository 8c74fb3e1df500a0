// Bursts of one kind of event from one source fold (issue 37 item 7): one tool call printing 2,500 fake thread
// deaths (each its own incident: a second thread dying is a second incident) made 2,500 critical events. The first
// FOLD_FREE events of a burst go out at once, each (no delay on the detection path, and a real engine's few
// same-class events in a second, distinct requests' errors, stay events); past them the others of the same class,
// severity and kind (a loop is its own kind) within FOLD_WINDOW_MS of the burst's first are counted, not raised.
// Only built-in rules' events fold (a user rule is the operator's own count). A graver event never folds into a lesser one, and the burst's events already told the detector what a repeat
// would.
import type { Severity } from '../../core/signals.js';

/** How long after a burst's first event the same kind of event from the same source folds into it. */
export const FOLD_WINDOW_MS = 10_000;
/** Events of one kind a burst raises before it folds the rest (bounds 2,500 to this many). */
export const FOLD_FREE = 32;
/** Kinds remembered at most (classes × severities × loop; expired ones are dropped past this). */
const MAX_KINDS = 256;

export interface FoldKey {
  class: string;
  severity: Severity;
  loop: boolean;
}

export class EventFolds {
  private readonly bursts = new Map<string, { from: number; raised: number; folded: number }>();

  constructor(
    private readonly windowMs = FOLD_WINDOW_MS,
    private readonly free = FOLD_FREE,
  ) {}

  /**
   * 0 when an event at `time` (Unix ms) of this kind is an event of its own (it starts a burst or is among its
   * first `free`), else how many events its burst has folded so far, this one included.
   */
  admit(k: FoldKey, time: number): number {
    const key = `${k.class}\u0000${k.severity}\u0000${k.loop ? 'loop' : ''}`;
    const b = this.bursts.get(key);
    // A line from before the burst (a re-read after a restart) starts its own: time never runs backwards here.
    if (b !== undefined && time >= b.from && time - b.from < this.windowMs) {
      if (b.raised < this.free) {
        b.raised++;
        return 0;
      }
      return ++b.folded;
    }
    if (this.bursts.size >= MAX_KINDS) this.prune(time);
    this.bursts.set(key, { from: time, raised: 1, folded: 0 });
    return 0;
  }

  private prune(now: number): void {
    for (const [k, b] of this.bursts) if (now - b.from >= this.windowMs) this.bursts.delete(k);
    // Still full (more kinds than any config declares): the oldest go.
    while (this.bursts.size >= MAX_KINDS) this.bursts.delete(this.bursts.keys().next().value!);
  }
}
