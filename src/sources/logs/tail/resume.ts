// Where reading a file starts, decided from what the offset store knows: pure (the caller applies what it says
// to the store and reports the rotation and the skip). A file is known by its identity (inode and fingerprint,
// offsets.ts), not its name: the same inode with the same first bytes resumes at its saved offset; an identity
// saved under another name (renamed into a glob's reach) or a copy of what we read (copytruncate's copy, same first
// bytes under another inode) resumes where that identity was left, never read twice. At most maxCatchUpBytes of a
// backlog is read; what the limit skips is counted, and reading then starts on the next whole line.
import { FP_MIN_CROSS, headMatches } from './fingerprint.js';
import type { PastOffset, SavedOffset } from './offsets.js';

export interface ResumeInput {
  path: string;
  file: { size: number; ino: number; dev: number };
  /** The file's first bytes (up to FP_BYTES). */
  head: Buffer;
  /** The store's record for this path. */
  saved: SavedOffset | undefined;
  /** Every identity the store knows (OffsetStore.all: by path, then the ones that left their path). */
  known: Iterable<PastOffset & { past: boolean }>;
  /** At start (the daemon's first poll), not a file that appeared while running. */
  initial: boolean;
  from: 'start' | 'end';
  maxCatchUpBytes: number;
  /** The saved state could not be loaded at all (offsets.ts recovery `lost`). */
  stateLost: boolean;
}

export interface Resume {
  /** Where reading starts. */
  offset: number;
  /** The catch-up limit cut into the backlog: `offset` is most likely mid-line (start at the next line). */
  midLine: boolean;
  /** The file was replaced (`rename`) or truncated in place while the daemon was down. */
  rotation?: 'rename' | 'truncate';
  /** Bytes of backlog the catch-up limit skipped. */
  skipped?: number;
  /** An identity taken up again under this path: the store stops remembering it as past. */
  forget?: SavedOffset;
  /** This path's record, no longer what the file holds: the store remembers it as past. */
  remember?: PastOffset;
}

export function startOffset(i: ResumeInput): Resume {
  const { file, head, saved } = i;
  const bounded = (from: number, effects: Omit<Resume, 'offset' | 'midLine'> = {}): Resume => {
    if (file.size - from <= i.maxCatchUpBytes) return { offset: from, midLine: false, ...effects };
    return {
      offset: file.size - i.maxCatchUpBytes,
      midLine: true,
      skipped: file.size - i.maxCatchUpBytes - from,
      ...effects,
    };
  };
  const inode = (o: SavedOffset) => o.ino === file.ino && o.dev === file.dev;
  if (saved && inode(saved) && headMatches(saved, head) && saved.offset <= file.size)
    return bounded(saved.offset);
  for (const o of i.known) {
    if (o.path === i.path && !o.past) continue;
    const at = i.initial ? o.offset : (o.read ?? o.offset);
    if (at > file.size || !headMatches(o, head)) continue;
    if (!inode(o) && (o.fpLen ?? 0) < FP_MIN_CROSS) continue;
    return bounded(at, { forget: o });
  }
  if (saved && i.initial) {
    // Another inode, or not what we read (shorter, or other first bytes): replaced or truncated while we were
    // down. Its own lines are all news; what the old file held past the offset was recovered (or reported) by
    // recover.ts.
    return bounded(0, {
      rotation: inode(saved) ? 'truncate' : 'rename',
      remember: { ...saved, path: i.path },
    });
  }
  // `from: end` skips what a first start finds; with the saved state lost (corrupt, no usable previous
  // generation) this is not a first start, and skipping would lose every line written while down: read from the
  // start instead, bounded by maxCatchUpBytes (critical lines already journaled raise nothing again).
  if (i.initial && i.from === 'end' && !i.stateLost) return { offset: file.size, midLine: false };
  // A file that appeared after start is new: all of it is news.
  return i.initial ? bounded(0) : { offset: 0, midLine: false };
}
