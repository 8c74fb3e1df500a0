// A file follower of our own (docs/decisions.md: the npm `tail` package lost ~20% of lines under rotation).
// It polls (every 250 ms, on one timer shared by every follower: poll-clock.ts), tracks each file by inode
// and fingerprint (its first bytes, fingerprint.ts) and keeps reading a renamed or deleted inode until it has
// been quiet for a while, so lines the writer adds after a rotation are not lost. A truncate in place (size
// below our position, or the head changed: truncated and regrown between two polls) restarts at 0; a copy of
// a followed file (copytruncate under a glob) reads only what the original had not read when it was
// truncated. A file rotated while the daemon was down is found among its siblings and read from the saved
// offset before the new one. Errors become callbacks and a retry on the next poll, never an exception.
// This file is the read loop; which files a path names is resolve.ts, where a file starts resume.ts, and finding
// a file rotated away recover.ts.
import * as nodeFs from 'node:fs';
import { FP_BYTES, FP_MIN_CROSS, fingerprint } from './fingerprint.js';
import type { OffsetStore, SavedOffset } from './offsets.js';
import { onPoll, type PollClock } from './poll-clock.js';
import { readRotatedCopy, recoverRotated, type RecoverContext } from './recover.js';
import { FileSet } from './resolve.js';
import { startOffset } from './resume.js';
import type { FileReader, FollowFs, OpenedFile, ReadErrorReason, RotationKind } from './types.js';
import { SAVE_EVERY_MS } from '../../../lib/state-store.js';
import type { PositionOptions } from '../reader-options.js';

export interface FollowerOptions extends PositionOptions {
  /** A file path, or a glob in the file name only (`/var/log/sglang/*.log`). */
  path: string;
  offsets?: OffsetStore;
  /**
   * `replayEnd`: the file's size when it was opened at start (or found rotated then): lines before it may have
   * been read by the previous run (up to one save interval of them), lines after it are new.
   */
  openReader(file: string, startOffset: number, replayEnd: number): FileReader;
  onRotation?(kind: RotationKind, file: string): void;
  /** Called once per error streak per path (the retry is silent until it succeeds or the error changes). */
  onError?(reason: ReadErrorReason, file: string, message: string): void;
  /** Every poll, files or not: the follower's heartbeat (a stalled poll loop is a blind watchdog). */
  onTick?(now: number): void;
  /** Saved offsets could not be used in full (catch-up limit): bytes skipped. */
  onSkip?(file: string, bytes: number): void;
  /** A file rotated while the daemon was down was not found: what it held past the saved offset is unread. */
  onGap?(file: string, message: string): void;
  pollMs?: number;
  /** The poll timer (default the shared one); tests step it by hand. */
  poll?: PollClock;
  idleFlushMs?: number;
  retireQuietMs?: number;
  readBufferBytes?: number;
  /** Read at most this much per tick before yielding to the event loop. */
  maxBytesPerTick?: number;
  fs?: FollowFs;
}

interface Handle {
  path: string;
  fd: number;
  ino: number;
  dev: number;
  pos: number;
  lastDataAt: number;
  reader: FileReader;
  /** The file's first bytes (up to FP_BYTES) as last read: a change means truncated and regrown. */
  head: Buffer;
  fp: string;
  /** Quiet since the last settle(). */
  settled: boolean;
  /** Copies of this file (same head, another inode) waiting for it to be truncated (copytruncate). */
  copies: Handle[];
  /**
   * This file is such a copy, not read while its original is followed: the copy may still be growing (the
   * copier writes it in pieces), and all of it is read through the original until that is truncated.
   */
  shadowOf?: Handle;
  /** Retired because it was deleted (no name left): nothing can resume it after a restart. */
  deleted?: boolean;
}

/** sizeChecked(): the file was truncated in place. */
const TRUNCATED = -1;

export class Follower {
  private readonly fs: FollowFs;
  private readonly now: () => number;
  private readonly fileSet: FileSet;
  /** What recover.ts needs of this follower. */
  private readonly recovery: RecoverContext;
  private readonly current = new Map<string, Handle>();
  private retired: Handle[] = [];
  private readonly errors = new Map<string, string>();
  private readonly buf: Buffer;
  private stopPoll?: () => void;
  private immediate?: NodeJS.Immediate;
  /** Scratch for the head check before each read (no allocation per poll). */
  private readonly headScratch = Buffer.allocUnsafe(FP_BYTES);
  private started = false;
  private stopped = false;
  private initial = true;
  private closed = false;

  constructor(private readonly o: FollowerOptions) {
    this.fs = o.fs ?? nodeFs;
    this.now = o.now ?? Date.now;
    this.fileSet = new FileSet(o.path);
    this.recovery = {
      fs: this.fs,
      files: this.fileSet,
      offsets: o.offsets,
      atStart: () => this.initial,
      openFile: (path) => this.openFile(path),
      close: (fd) => this.close({ fd }),
      reading: (path) => this.retired.some((r) => r.path === path),
      readRotated: (file, opened, from) => this.retired.push(this.handle(file, opened, from)),
      ...(o.onGap ? { onGap: o.onGap } : {}),
    };
    // 64 KiB: chunk strings stay in V8's young generation (see docs/decisions.md, batch-line skipping).
    this.buf = Buffer.allocUnsafe(o.readBufferBytes ?? 1 << 16);
  }

  /** Opens what exists now (at the saved offset, or per `from`) and starts watching. */
  start(): void {
    if (this.started) return;
    this.started = true;
    recoverRotated(this.recovery);
    this.tick();
    this.initial = false;
    // 250 ms, mtail's --poll_interval. No directory watch (inotify) beside it: with 50 targets following the
    // same engine logs, each line written woke 100 watchers and their reads (issue 18), and a watch sees
    // nothing through the symlinks of Kubernetes' /var/log/containers nor on network file systems anyway.
    this.stopPoll = (this.o.poll ?? onPoll)(this.o.pollMs ?? 250, () => this.tick());
  }

  /** Stops watching and reads what is left (the offsets are saved by stop, which may follow later). */
  halt(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.stopPoll?.();
    if (this.immediate) clearImmediate(this.immediate);
    this.tick(true);
  }

  /** Stops watching; saves offsets (after the last complete line) and closes every file. */
  stop(): void {
    if (this.closed) return;
    this.closed = true;
    this.halt();
    this.saveOffsets(true);
    for (const h of [...this.current.values(), ...this.retired]) this.close(h);
    this.current.clear();
    this.retired = [];
  }

  /** Files currently followed (for tests and status). */
  files(): string[] {
    return [...this.current.keys()];
  }

  private schedule(): void {
    if (this.immediate || this.stopped) return;
    this.immediate = setImmediate(() => {
      this.immediate = undefined;
      this.tick();
    });
  }

  private error(key: string, reason: ReadErrorReason, message: string): void {
    const tag = `${reason}:${message}`;
    if (this.errors.get(key) === tag) return;
    this.errors.set(key, tag);
    this.o.onError?.(reason, key, message);
  }

  private clearError(key: string): void {
    this.errors.delete(key);
  }

  private tick(final = false): void {
    if (this.stopped && !final) return;
    // 1 MiB per turn (~3 ms of matching), then yield: a log flood must not delay probes or scrapes.
    let budget = this.o.maxBytesPerTick ?? 1 << 20;
    const now = this.now();
    if (!final) this.o.onTick?.(now);
    // Renamed or deleted inodes: the writer may still be appending through its old descriptor.
    this.retired = this.retired.filter((h) => {
      budget -= this.drain(h, budget);
      // At stop, a renamed file keeps its incomplete last line for the next run (it resumes the file from its
      // saved offset); a deleted one is let go whole.
      if ((final && h.deleted) || (!final && now - h.lastDataAt >= (this.o.retireQuietMs ?? 2000))) {
        h.reader.flush();
        this.remember(h);
        this.close(h);
        return false;
      }
      return true;
    });
    for (const h of this.current.values()) {
      // Before reading on: a file truncated and regrown past our position since the last poll would
      // otherwise be read from the middle. A file that has not grown is not read at all.
      const size = this.sizeChecked(h);
      if (size === TRUNCATED) this.truncated(h);
      if (size !== h.pos || h.shadowOf) budget -= this.drain(h, budget);
    }
    if (final) return;
    for (const path of this.paths()) {
      const h = this.current.get(path);
      let st: nodeFs.Stats;
      try {
        st = this.fs.statSync(path);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (h) this.retire(h);
        else if (code === 'ENOENT' || code === 'ENOTDIR') this.error(path, 'missing', 'no such file');
        else this.error(path, code === 'EACCES' || code === 'EPERM' ? 'permission' : 'io', String(code));
        continue;
      }
      if (!st.isFile()) {
        if (h) this.retire(h);
        this.error(path, 'unreadable', st.isDirectory() ? 'is a directory' : 'not a regular file');
        continue;
      }
      if (h && (st.ino !== h.ino || st.dev !== h.dev)) {
        this.retire(h);
        // What the old inode holds was written first: read it before the new file, so events keep file order.
        budget -= this.drain(h, budget);
        this.open(path, st, budget);
      } else if (!h) {
        this.open(path, st, budget);
      }
    }
    // An incomplete line is held until its newline however long that takes (cutting it would make two
    // lines no rule matches); only multi-line matches waiting for more lines are raised when it is quiet.
    for (const h of [...this.current.values(), ...this.retired]) {
      if (!h.settled && now - h.lastDataAt >= (this.o.idleFlushMs ?? 1000)) {
        h.settled = true;
        h.reader.settle();
      }
    }
    this.saveOffsets(false);
    if (budget <= 0) this.schedule();
  }

  private paths(): string[] {
    const { paths, problem } = this.fileSet.list(this.fs, this.current.keys(), this.o.offsets?.paths() ?? []);
    // Cleared only when something matches: error() reports once per streak, so a glob that stays empty is one
    // warning, not one per poll.
    if (problem) this.error(this.o.path, problem.reason, problem.message);
    else if (problem === null) this.clearError(this.o.path);
    return paths;
  }

  /** The path no longer names this inode: keep draining it for a while, then let it go. */
  private retire(h: Handle): void {
    this.current.delete(h.path);
    let nlink = 1;
    try {
      nlink = this.fs.fstatSync(h.fd).nlink;
    } catch {
      // Keep the rename guess; the descriptor is still ours to drain.
    }
    this.o.onRotation?.(nlink === 0 ? 'recreate' : 'rename', h.path);
    h.deleted = nlink === 0;
    h.lastDataAt = this.now();
    // Renamed, not truncated: its copies hold nothing it will not read itself.
    for (const c of h.copies) this.unshadow(c, Number.POSITIVE_INFINITY);
    h.copies = [];
    this.retired.push(h);
  }

  /** The first bytes of an open file, up to FP_BYTES (fewer when the file is shorter). */
  private readHead(fd: number, size: number): Buffer {
    const head = Buffer.alloc(Math.min(size, FP_BYTES));
    return head.subarray(0, this.readStart(fd, head, head.length));
  }

  /** Reads a file's first `n` bytes into `into`; returns how many there were. */
  private readStart(fd: number, into: Buffer, n: number): number {
    let got = 0;
    while (got < n) {
      const r = this.fs.readSync(fd, into, got, n - got, got);
      if (r <= 0) break;
      got += r;
    }
    return got;
  }

  /**
   * The size of a held file, or TRUNCATED when it was truncated since we read it: shorter than our position,
   * or, when it has grown, its first bytes changed (truncated and regrown). A file that has not grown is not
   * read, head included: regrown to exactly our position, it is caught before its next line is read.
   */
  private sizeChecked(h: Handle): number {
    try {
      const size = this.fs.fstatSync(h.fd).size;
      if (size < h.pos) return TRUNCATED;
      if (size === h.pos || h.head.length === 0) return size;
      const n = h.head.length;
      const same =
        this.readStart(h.fd, this.headScratch, n) === n && this.headScratch.compare(h.head, 0, n, 0, n) === 0;
      return same ? size : TRUNCATED;
    } catch {
      // A read error shows on the drain, which reports it.
      return Number.NaN;
    }
  }

  /** Truncated in place (copytruncate, `> file`): start over at 0; copies of the old content take up its tail. */
  private truncated(h: Handle): void {
    this.o.onRotation?.('truncate', h.path);
    const done = h.reader.consumed ?? h.reader.committed;
    const old = { ...this.identity(h), path: h.path };
    this.o.offsets?.remember(old);
    // Copytruncate of a path we follow alone: the copy (not ours to follow) holds the lines we had not read.
    if (h.copies.length === 0 && h.head.length >= FP_MIN_CROSS) readRotatedCopy(this.recovery, old);
    // The copies hold what the writer wrote before they were made: the part we had not read yet is news.
    for (const c of h.copies) this.unshadow(c, done);
    h.copies = [];
    h.pos = 0;
    h.reader.reset();
    h.head = Buffer.alloc(0);
    h.fp = fingerprint(h.head, 0);
    h.settled = false;
    // The path's record names the new content now: a copy opened later in this poll must find the old
    // identity (just remembered, at the offset read) and not this path's record of the last poll.
    this.o.offsets?.set(h.path, this.identity(h));
  }

  /** A copy's original was truncated (read the copy from `from`) or renamed (nothing in the copy is news). */
  private unshadow(c: Handle, from: number): void {
    c.shadowOf = undefined;
    let size = c.pos;
    try {
      size = this.fs.fstatSync(c.fd).size;
    } catch {
      // Resumed where it stood; a read error shows on the next drain.
    }
    this.restartAt(c, Math.min(from, size));
  }

  private restartAt(h: Handle, offset: number): void {
    h.pos = offset;
    h.reader = this.o.openReader(h.path, offset, 0);
    h.settled = false;
  }

  /** The head grows with the file up to FP_BYTES; a longer head tells more files apart. */
  private extendHead(h: Handle): void {
    if (h.head.length >= FP_BYTES || h.pos <= h.head.length) return;
    try {
      h.head = this.readHead(h.fd, Math.min(h.pos, FP_BYTES));
      h.fp = fingerprint(h.head, h.head.length);
    } catch {
      // Kept as it was: the next poll tries again.
    }
  }

  private identity(h: Handle): SavedOffset {
    const read = h.reader.consumed ?? h.reader.committed;
    return {
      ino: h.ino,
      dev: h.dev,
      offset: h.reader.committed,
      ...(read !== h.reader.committed ? { read } : {}),
      fp: h.fp,
      fpLen: h.head.length,
    };
  }

  private remember(h: Handle): void {
    this.o.offsets?.remember({ ...this.identity(h), path: h.path });
  }

  private open(path: string, st: nodeFs.Stats, budget: number): void {
    // The same inode under a new name (a rename into a glob's reach): adopt it, never read it twice.
    const same = this.retired.find((r) => r.ino === st.ino && r.dev === st.dev);
    if (same) {
      this.retired = this.retired.filter((r) => r !== same);
      this.o.offsets?.forget(this.identity(same));
      same.path = path;
      this.current.set(path, same);
      return;
    }
    const opened = this.openFile(path);
    if (!opened) return;
    const { fst, head } = opened;
    // A copy of a file we follow (copytruncate's copy under a glob): it holds nothing new until the original
    // is truncated; then what the original had not read yet is read from the copy (truncated()).
    const original = [...this.current.values()].find(
      (o) =>
        (o.ino !== fst.ino || o.dev !== fst.dev) &&
        o.head.length >= FP_MIN_CROSS &&
        head.length >= o.head.length &&
        head.subarray(0, o.head.length).equals(o.head),
    );
    const start = original ? fst.size : this.resume(path, opened);
    const h = this.handle(path, opened, start);
    if (original) {
      h.shadowOf = original;
      original.copies.push(h);
    }
    this.current.set(path, h);
    this.drain(h, budget);
  }

  /**
   * Opens a path the caller has just stat()ed as a regular file. Non-blocking, and the opened fd is what is
   * checked: a FIFO swapped in between the stat and the open would otherwise block open() until a writer comes,
   * freezing the daemon for good (SIGTERM included; issue 24 finding 5), and a device (/dev/zero) would be read as
   * a log. O_NONBLOCK changes nothing for a regular file's reads.
   */
  private openFile(path: string): OpenedFile | undefined {
    let fd: number;
    try {
      fd = this.fs.openSync(path, nodeFs.constants.O_RDONLY | nodeFs.constants.O_NONBLOCK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      this.error(path, code === 'EACCES' || code === 'EPERM' ? 'permission' : 'io', String(code));
      return undefined;
    }
    try {
      const fst = this.fs.fstatSync(fd);
      if (!fst.isFile()) {
        this.close({ fd });
        this.error(path, 'unreadable', fst.isDirectory() ? 'is a directory' : 'not a regular file');
        return undefined;
      }
      const head = this.readHead(fd, fst.size);
      this.clearError(path);
      return { fd, fst, head };
    } catch (err) {
      this.close({ fd });
      this.error(path, 'io', String((err as NodeJS.ErrnoException).code));
      return undefined;
    }
  }

  /** The offset just past the next newline at or after `from`: a skipped backlog resumes on a whole line. */
  private nextLineStart(fd: number, from: number, size: number): number {
    let pos = from;
    while (pos < size) {
      let n: number;
      try {
        n = this.fs.readSync(fd, this.buf, 0, Math.min(this.buf.length, size - pos), pos);
      } catch {
        return from;
      }
      if (n <= 0) break;
      const nl = this.buf.indexOf(10);
      if (nl >= 0 && nl < n) return pos + nl + 1;
      pos += n;
    }
    return size;
  }

  /** Where a file opened by the poll starts (resume.ts), with the store told and the rotation and skip reported. */
  private resume(path: string, { fd, fst, head }: OpenedFile): number {
    const store = this.o.offsets;
    const r = startOffset({
      path,
      file: fst,
      head,
      saved: store?.get(path),
      known: store?.all() ?? [],
      initial: this.initial,
      from: this.o.from,
      maxCatchUpBytes: this.o.maxCatchUpBytes,
      stateLost: store?.recovery === 'lost',
    });
    if (r.forget) store!.forget(r.forget);
    if (r.remember) store!.remember(r.remember);
    if (r.rotation) this.o.onRotation?.(r.rotation, path);
    if (r.skipped !== undefined) this.o.onSkip?.(path, r.skipped);
    return r.midLine ? this.nextLineStart(fd, r.offset - 1, fst.size) : r.offset;
  }

  /** A followed file, opened, read from `pos`. */
  private handle(path: string, { fd, fst, head }: OpenedFile, pos: number): Handle {
    return {
      path,
      fd,
      ino: fst.ino,
      dev: fst.dev,
      pos,
      lastDataAt: this.now(),
      reader: this.o.openReader(path, pos, this.initial ? fst.size : 0),
      head,
      fp: fingerprint(head, head.length),
      settled: false,
      copies: [],
    };
  }

  /** Reads what is there (up to `budget` bytes); returns the bytes read. */
  private drain(h: Handle, budget: number): number {
    if (h.shadowOf) {
      // Its original left without a truncate or rename we saw (deleted, stopped): the copy is all read.
      if (!this.current.has(h.shadowOf.path) || this.current.get(h.shadowOf.path) !== h.shadowOf)
        this.unshadow(h, Number.POSITIVE_INFINITY);
      return 0;
    }
    let total = 0;
    while (budget - total > 0) {
      let n: number;
      try {
        n = this.fs.readSync(h.fd, this.buf, 0, Math.min(this.buf.length, budget - total), h.pos);
      } catch (err) {
        this.error(h.path, 'io', `read: ${String((err as NodeJS.ErrnoException).code)}`);
        break;
      }
      if (n <= 0) break;
      h.reader.feed(this.buf, n);
      h.pos += n;
      total += n;
    }
    if (total > 0) {
      h.lastDataAt = this.now();
      h.settled = false;
      this.extendHead(h);
    }
    return total;
  }

  /** When this follower last handed its positions to the store (the store saves at most every saveEveryMs). */
  private offsetsAt = Number.NEGATIVE_INFINITY;

  private saveOffsets(force: boolean): void {
    const store = this.o.offsets;
    if (!store) return;
    const now = this.now();
    const every = this.o.saveEveryMs ?? SAVE_EVERY_MS;
    // Not every poll: building the records is work, and a saved offset only bounds what a restart reads again.
    if (!force && now - this.offsetsAt < every) return;
    this.offsetsAt = now;
    for (const h of this.current.values()) store.set(h.path, this.identity(h));
    // A rotated file still being read: a restart finds it among the siblings and resumes it.
    for (const h of this.retired) this.remember(h);
    // Paths our pattern owns that are gone: their identity may show up again under another name.
    if (this.fileSet.glob !== null) {
      for (const p of store.paths()) {
        if (!this.fileSet.owns(p) || this.current.has(p)) continue;
        this.o.offsets!.remember({ ...store.get(p)!, path: p });
        store.delete(p);
      }
    }
    store.saveThrottled(now, every, force, (message) => this.o.onSaveError?.(message));
  }

  private close(h: { fd: number }): void {
    try {
      this.fs.closeSync(h.fd);
    } catch {
      // Already closed or gone: nothing left to release.
    }
  }
}
