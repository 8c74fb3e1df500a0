// What every reader that saves where it stands (the file follower's offsets, the journal source's cursor) is told
// alike: where a first start begins, how much backlog a restart reads, and how its position is saved.
export interface PositionOptions {
  /** A first start reads what the source holds (`start`) or only what is written from now on (`end`). */
  from: 'start' | 'end';
  /** At most this much backlog is read after a restart; what lies before it is counted as skipped. */
  maxCatchUpBytes: number;
  /** Saving the position failed (once per streak of the same error); reading goes on. */
  onSaveError?(message: string): void;
  saveEveryMs?: number;
  now?: () => number;
}
