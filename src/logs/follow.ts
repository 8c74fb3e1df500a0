// A file follower of our own (docs/decisions.md: the npm `tail` package lost ~20% of lines under rotation).
// It watches the directory and also polls, tracks each file by inode and keeps reading a renamed or
// deleted inode until it has been quiet for a while, so lines the writer adds after a rotation are not
// lost. Copytruncate (size below our position) restarts at 0. Errors become callbacks and a retry on the
// next poll, never an exception.
import * as nodeFs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { OffsetStore } from './offsets.js';

/** What the follower feeds: one per opened file (inode). */
export interface FileReader {
  feed(buf: Buffer, n: number): void;
  /** Emit the incomplete last line (idle, or the file is being let go). */
  flush(): void;
  /** The file was truncated in place: start over at offset 0. */
  reset(): void;
  readonly hasPartial: boolean;
  /** Offset just after the last complete line. */
  readonly committed: number;
}

export type RotationKind = 'rename' | 'truncate' | 'recreate';
export type ReadErrorReason = 'missing' | 'permission' | 'unreadable' | 'io';

/** The fs calls the follower makes; tests inject failures through this. */
export type FollowFs = Pick<
  typeof nodeFs,
  'openSync' | 'readSync' | 'fstatSync' | 'statSync' | 'closeSync' | 'readdirSync' | 'watch'
>;

export interface FollowerOptions {
  /** A file path, or a glob in the file name only (`/var/log/sglang/*.log`). */
  path: string;
  from: 'start' | 'end';
  maxCatchUpBytes: number;
  offsets?: OffsetStore;
  openReader(file: string, startOffset: number): FileReader;
  onRotation?(kind: RotationKind, file: string): void;
  /** Called once per error streak per path (the retry is silent until it succeeds or the error changes). */
  onError?(reason: ReadErrorReason, file: string, message: string): void;
  /** Every poll, files or not: the follower's heartbeat (a stalled poll loop is a blind watchdog). */
  onTick?(now: number): void;
  /** Saved offsets could not be used in full (catch-up limit): bytes skipped. */
  onSkip?(file: string, bytes: number): void;
  pollMs?: number;
  idleFlushMs?: number;
  retireQuietMs?: number;
  readBufferBytes?: number;
  /** Read at most this much per tick before yielding to the event loop. */
  maxBytesPerTick?: number;
  saveEveryMs?: number;
  now?: () => number;
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
}

const GLOB_CHARS = /[*?[]/;

export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (const c of glob) {
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

export class Follower {
  private readonly fs: FollowFs;
  private readonly now: () => number;
  private readonly dir: string;
  private readonly glob: RegExp | null;
  private readonly current = new Map<string, Handle>();
  private retired: Handle[] = [];
  private readonly errors = new Map<string, string>();
  private readonly buf: Buffer;
  private poll?: NodeJS.Timeout;
  private watcher?: nodeFs.FSWatcher;
  private immediate?: NodeJS.Immediate;
  private started = false;
  private stopped = false;
  private initial = true;
  private lastSave = 0;

  constructor(private readonly o: FollowerOptions) {
    this.fs = o.fs ?? nodeFs;
    this.now = o.now ?? Date.now;
    this.dir = dirname(o.path);
    if (GLOB_CHARS.test(this.dir)) {
      throw new Error(`log path ${o.path}: only the file name may contain wildcards`);
    }
    this.glob = GLOB_CHARS.test(basename(o.path)) ? globToRegExp(basename(o.path)) : null;
    // 64 KiB: chunk strings stay in V8's young generation (see docs/decisions.md, batch-line skipping).
    this.buf = Buffer.allocUnsafe(o.readBufferBytes ?? 1 << 16);
  }

  /** Opens what exists now (at the saved offset, or per `from`) and starts watching. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.tick();
    this.initial = false;
    this.poll = setInterval(() => this.tick(), this.o.pollMs ?? 100);
    this.poll.unref();
  }

  /** Stops watching; saves offsets (after the last complete line) and closes every file. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.poll);
    if (this.immediate) clearImmediate(this.immediate);
    this.watcher?.close();
    this.tick(true);
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

  private ensureWatch(): void {
    if (this.watcher || this.stopped) return;
    try {
      this.watcher = this.fs.watch(this.dir, { persistent: false }, () => this.schedule());
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch {
      // The directory does not exist yet: the poll keeps trying.
    }
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
      if (final || now - h.lastDataAt >= (this.o.retireQuietMs ?? 2000)) {
        h.reader.flush();
        this.close(h);
        return false;
      }
      return true;
    });
    for (const h of this.current.values()) budget -= this.drain(h, budget);
    if (final) return;
    this.ensureWatch();
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
      } else if (h && st.size < h.pos) {
        this.o.onRotation?.('truncate', path);
        h.pos = 0;
        h.reader.reset();
        budget -= this.drain(h, budget);
      } else if (!h) {
        this.open(path, st, budget);
      }
    }
    for (const h of [...this.current.values(), ...this.retired]) {
      if (h.reader.hasPartial && now - h.lastDataAt >= (this.o.idleFlushMs ?? 1000)) h.reader.flush();
    }
    this.saveOffsets(false);
    if (budget <= 0) this.schedule();
  }

  private paths(): string[] {
    // Files we hold stay checked even when they no longer match, so their rotation is noticed.
    const out = new Set(this.current.keys());
    if (this.glob === null) {
      out.add(this.o.path);
      return [...out];
    }
    try {
      for (const name of this.fs.readdirSync(this.dir)) {
        if (this.glob.test(name)) out.add(join(this.dir, name));
      }
      // Cleared only when something matches: error() reports once per streak, so a glob that stays empty
      // is one warning, not one per poll.
      if (out.size > 0) this.clearError(this.o.path);
      else this.error(this.o.path, 'missing', 'no file matches');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      this.error(this.o.path, code === 'ENOENT' ? 'missing' : 'io', `directory: ${String(code)}`);
    }
    return [...out];
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
    h.lastDataAt = this.now();
    this.retired.push(h);
  }

  private open(path: string, st: nodeFs.Stats, budget: number): void {
    // The same inode under a new name (a rename into a glob's reach): adopt it, never read it twice.
    const same = this.retired.find((r) => r.ino === st.ino && r.dev === st.dev);
    if (same) {
      this.retired = this.retired.filter((r) => r !== same);
      same.path = path;
      this.current.set(path, same);
      return;
    }
    let fd: number;
    try {
      fd = this.fs.openSync(path, 'r');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      this.error(path, code === 'EACCES' || code === 'EPERM' ? 'permission' : 'io', String(code));
      return;
    }
    let fst: nodeFs.Stats;
    try {
      fst = this.fs.fstatSync(fd);
    } catch (err) {
      this.fs.closeSync(fd);
      this.error(path, 'io', String((err as NodeJS.ErrnoException).code));
      return;
    }
    this.clearError(path);
    let start = this.startOffset(path, fst);
    if (this.cutInLine) start = this.nextLineStart(fd, start - 1, fst.size);
    const h: Handle = {
      path,
      fd,
      ino: fst.ino,
      dev: fst.dev,
      pos: start,
      lastDataAt: this.now(),
      reader: this.o.openReader(path, start),
    };
    this.current.set(path, h);
    this.drain(h, budget);
  }

  /** Set by startOffset when the catch-up limit cut into the backlog, most likely mid-line. */
  private cutInLine = false;

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

  private startOffset(path: string, st: nodeFs.Stats): number {
    const limit = this.o.maxCatchUpBytes;
    this.cutInLine = false;
    const bounded = (from: number) => {
      if (st.size - from <= limit) return from;
      this.o.onSkip?.(path, st.size - limit - from);
      this.cutInLine = true;
      return st.size - limit;
    };
    // By path, else by inode: a file rotated by rename while we were down resumes under its new name.
    const saved = this.o.offsets?.get(path) ?? this.o.offsets?.findByInode(st.dev, st.ino);
    if (saved) {
      // Same inode: resume. Another inode, or shorter than our offset: replaced or truncated while we were down.
      if (saved.ino === st.ino && saved.dev === st.dev && saved.offset <= st.size)
        return bounded(saved.offset);
      return bounded(0);
    }
    if (this.initial && this.o.from === 'end') return st.size;
    // A file that appeared after start is new: all of it is news.
    return this.initial ? bounded(0) : 0;
  }

  /** Reads what is there (up to `budget` bytes); returns the bytes read. */
  private drain(h: Handle, budget: number): number {
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
    if (total > 0) h.lastDataAt = this.now();
    return total;
  }

  private saveOffsets(force: boolean): void {
    const store = this.o.offsets;
    if (!store) return;
    for (const h of this.current.values()) {
      store.set(h.path, { ino: h.ino, dev: h.dev, offset: h.reader.committed });
    }
    const now = this.now();
    if (!store.isDirty || (!force && now - this.lastSave < (this.o.saveEveryMs ?? 1000))) return;
    this.lastSave = now;
    try {
      store.save();
    } catch (err) {
      this.error(store.file, 'io', `saving offsets: ${String((err as NodeJS.ErrnoException).code ?? err)}`);
    }
  }

  private close(h: Handle): void {
    try {
      this.fs.closeSync(h.fd);
    } catch {
      // Already closed or gone: nothing left to release.
    }
  }
}
