// Saved read positions of log files, so a restart resumes where the last run stopped. A file is known by its
// identity, not its name: inode (dev, ino) plus a fingerprint, a hash of its first bytes (fingerprint.ts).
// The inode follows a rename; the fingerprint tells a file truncated and rewritten in place (copytruncate)
// from the one we read, and recognises a copy of it (copytruncate's copy, under a glob) as already read.
// Identities that left their path (rotated away, truncated) are kept a while in `past`, so a rotated
// file found later, or after a restart, resumes at its offset instead of being read again from 0.
import { join } from 'node:path';
import { KeyedStore } from '../../../lib/state-store.js';

export interface SavedOffset {
  ino: number;
  dev: number;
  /** Just after the last line read (and, for lines that raised an event, journaled): where a restart resumes. */
  offset: number;
  /** Just after the last line processed, when past `offset` (events not journaled yet): where a copy resumes. */
  read?: number;
  /** Fingerprint of the file's first `fpLen` bytes (absent in state saved by older versions). */
  fp?: string;
  fpLen?: number;
}

export interface PastOffset extends SavedOffset {
  /** The path the identity was last read under. */
  path: string;
}

/** Identities remembered after they left their path: a few rotations of each followed file. */
const PAST_KEEP = 64;

const validOffset = (o: unknown): o is SavedOffset => {
  const r = o as SavedOffset;
  return (
    typeof r === 'object' &&
    r !== null &&
    Number.isSafeInteger(r.ino) &&
    Number.isSafeInteger(r.offset) &&
    r.offset >= 0 &&
    (r.fp === undefined || (typeof r.fp === 'string' && Number.isSafeInteger(r.fpLen)))
  );
};

const sameOffset = (a: SavedOffset, b: SavedOffset) =>
  a.ino === b.ino &&
  a.dev === b.dev &&
  a.offset === b.offset &&
  a.read === b.read &&
  a.fp === b.fp &&
  a.fpLen === b.fpLen;

export class OffsetStore extends KeyedStore<SavedOffset> {
  private past: PastOffset[] = [];

  constructor(stateDir: string, name: string) {
    super(join(stateDir, `log-offsets-${name}.json`), 'files', validOffset, sameOffset);
  }

  /** Every saved identity, by path first, then the ones that left their path (newest first, `past`). */
  *all(): Generator<PastOffset & { past: boolean }> {
    for (const [path, o] of this.records) yield { ...o, path, past: false };
    for (let i = this.past.length - 1; i >= 0; i--) yield { ...this.past[i]!, past: true };
  }

  /** Paths with a saved offset. */
  paths(): string[] {
    return [...this.records.keys()];
  }

  /** An identity no longer under its path (rotated away, truncated): kept so a copy or restart finds it. */
  remember(rec: PastOffset & { past?: boolean }): void {
    const { past: _, ...o } = rec;
    const i = this.past.findIndex((p) => p.fp === o.fp && p.ino === o.ino && p.dev === o.dev);
    if (i >= 0) {
      if (sameOffset(this.past[i]!, o) && this.past[i]!.path === o.path) return;
      this.past.splice(i, 1);
    }
    this.past.push(o);
    if (this.past.length > PAST_KEEP) this.past.splice(0, this.past.length - PAST_KEEP);
    this.dirty = true;
  }

  /** A remembered identity was taken up again under a path (it is saved there from now on). */
  forget(o: SavedOffset): void {
    const n = this.past.length;
    this.past = this.past.filter((p) => !(p.fp === o.fp && p.ino === o.ino && p.dev === o.dev));
    if (this.past.length !== n) this.dirty = true;
  }

  protected override extra(): Record<string, unknown> {
    return { past: this.past };
  }

  protected override loadExtra(parsed: Record<string, unknown>): void {
    const past = Array.isArray(parsed.past) ? (parsed.past as unknown[]) : [];
    this.past = past.filter(
      (p): p is PastOffset => validOffset(p) && typeof (p as PastOffset).path === 'string',
    );
  }
}
