// Files that left one of our paths (renamed by logrotate, or copied before a copytruncate) and that our pattern
// does not cover, found among the directory's other files by inode or fingerprint and read from the saved offset
// (as a retired file: to its end, then let go). At start that is a rotation while the daemon was down; running, a
// copytruncate of a path followed alone (its copy holds the lines we had not read when it was truncated).
import type * as nodeFs from 'node:fs';
import { basename, join } from 'node:path';
import { FP_MIN_CROSS, headMatches } from './fingerprint.js';
import type { OffsetStore, PastOffset } from './offsets.js';
import type { FileSet } from './resolve.js';
import type { FollowFs, OpenedFile } from './types.js';

/** Rotated copies a logrotate `compress` made: not text, never read. */
const COMPRESSED = /\.(gz|bz2|xz|zst|lz4|z|zip)$/i;

/** What the recovery needs of its follower. */
export interface RecoverContext {
  readonly fs: FollowFs;
  readonly files: FileSet;
  readonly offsets: OffsetStore | undefined;
  /** At start (a copy resumes at the saved offset), not running (where the lines were processed). */
  atStart(): boolean;
  /** Opens a regular file (errors reported by the follower), or undefined. */
  openFile(path: string): OpenedFile | undefined;
  close(fd: number): void;
  /** Whether a rotated file is already being read under `path`. */
  reading(path: string): boolean;
  /** Read the opened `file` from `from` to its end as a rotated file, then let it go. */
  readRotated(file: string, opened: OpenedFile, from: number): void;
  onGap?(file: string, message: string): void;
}

/**
 * At start: every saved identity of our paths whose path no longer holds it is looked for under another name
 * and read from its saved offset before the new file. A plain path whose rotated file is nowhere is reported:
 * what it held past the offset is unread.
 */
export function recoverRotated(ctx: RecoverContext): void {
  for (const o of [...(ctx.offsets?.all() ?? [])]) {
    if (!ctx.files.owns(o.path)) continue;
    try {
      const st = ctx.fs.statSync(o.path);
      if (st.ino === o.ino && st.dev === o.dev) {
        const opened = ctx.openFile(o.path);
        if (!opened) continue;
        ctx.close(opened.fd);
        // Still what we read: nothing left its path.
        if (headMatches(o, opened.head) && o.offset <= opened.fst.size) continue;
      }
    } catch {
      // Gone: its content may live on under another name.
    }
    const found = readRotatedCopy(ctx, o);
    if (!found && !o.past && ctx.files.glob === null) {
      ctx.onGap?.(
        o.path,
        'rotated while the daemon was down and the rotated file was not found: lines written to it after the last save are unread',
      );
    }
  }
}

/**
 * Looks for the file holding identity `rec` among the directory's files our pattern does not follow (its inode
 * renamed, or a copy with its first bytes) and, when it holds more than the offset, has it read as a rotated file.
 * Returns whether it was found.
 */
export function readRotatedCopy(ctx: RecoverContext, rec: PastOffset): boolean {
  // Running, a copy resumes where the lines were processed; at start, where the saved offset says (lines read
  // again past it raise no journaled event twice).
  const from = ctx.atStart() ? rec.offset : (rec.read ?? rec.offset);
  let names: string[];
  try {
    names = ctx.fs.readdirSync(ctx.files.dir);
  } catch {
    return false;
  }
  const base = basename(rec.path);
  for (const name of names) {
    if (name === base || !name.startsWith(base) || COMPRESSED.test(name)) continue;
    const file = join(ctx.files.dir, name);
    if (ctx.files.owns(file) || ctx.reading(file)) continue;
    let st: nodeFs.Stats;
    try {
      st = ctx.fs.statSync(file);
    } catch {
      continue;
    }
    const inode = st.ino === rec.ino && st.dev === rec.dev;
    if (!st.isFile() || (!inode && (rec.fpLen ?? 0) < FP_MIN_CROSS) || st.size < from) continue;
    const opened = ctx.openFile(file);
    if (!opened) continue;
    if (!headMatches(rec, opened.head)) {
      ctx.close(opened.fd);
      continue;
    }
    ctx.offsets?.forget(rec);
    if (st.size === from) ctx.close(opened.fd);
    else ctx.readRotated(file, opened, from);
    return true;
  }
  return false;
}
