// The one way a small piece of daemon state (log offsets, journal cursors) reaches stateDir: a JSON file of
// keyed records, rewritten whole through a temp file that is fsynced and then renamed over the old one. A full
// disk (ENOSPC) or a crash mid-write leaves the previous file whole; the temp file is removed on failure, and
// temp files a crash left behind are removed when the store is loaded (issue 16 item 11). A store also keeps the
// generation before the newest as `<file>.prev`: a newest file that reads back corrupt (a torn sector, a bad
// edit) falls back to it instead of to nothing, which with `from: end` skipped every line written while the
// daemon was down (issue 24 finding 17).
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Offsets and cursors reach the disk at most this often (promtail's positions sync_period default, 10 s): each save is a
 * write, two fsyncs and a rename, per target. After a crash, lines since the last save are read again; their
 * events are not raised twice (journal refs), only the line counters count them again.
 */
export const SAVE_EVERY_MS = 10_000;

/** Where a store keeps the generation before its newest. */
export const previousOf = (file: string): string => `${file}.prev`;

/**
 * Just before a new generation is renamed over `file`: hard-links the current one to `<file>.prev` (a link, then
 * a rename over the old `.prev`), so both names always hold a whole file and a crash in between loses neither.
 * Best effort: a file system without hard links keeps no previous generation.
 */
function keepPrevious(file: string): void {
  const tmp = `${previousOf(file)}.${process.pid}.tmp`;
  try {
    rmSync(tmp, { force: true });
    linkSync(file, tmp);
    renameSync(tmp, previousOf(file));
  } catch {
    rmSync(tmp, { force: true });
  }
}

/**
 * Writes `text` to `file` atomically and durably: temp file, fsync, rename, fsync of the directory. `keepPrevious`:
 * the file it replaces stays as `<file>.prev`.
 */
export function writeFileAtomic(file: string, text: string, opts: { keepPrevious?: boolean } = {}): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'w');
    const buf = Buffer.from(text);
    for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    if (opts.keepPrevious) keepPrevious(file);
    renameSync(tmp, file);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  // The rename is durable only once the directory is; a failure here leaves a whole file either way.
  try {
    const d = openSync(dir, 'r');
    try {
      fsyncSync(d);
    } finally {
      closeSync(d);
    }
  } catch {
    // Some file systems refuse fsync on a directory: the rename has still happened.
  }
}

let tmpSeq = 0;

/**
 * writeFileAtomic with the write and the fsyncs on libuv's pool: an fsync can take tens of milliseconds on a busy
 * disk, and with 50 targets saving their offsets the event loop (probes, scrapes) waited on them. The rename is
 * made on the event loop, and only when `mayLand()` says no newer save of the file has landed meanwhile: a
 * synchronous save (at stop) may overtake this one, and an older state must never replace it.
 */
export async function writeFileAtomicAsync(
  file: string,
  text: string,
  mayLand: () => boolean,
  opts: { keepPrevious?: boolean } = {},
): Promise<void> {
  const dir = dirname(file);
  await mkdir(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.${++tmpSeq}.tmp`;
  try {
    const fh = await open(tmp, 'w');
    try {
      const buf = Buffer.from(text);
      for (let off = 0; off < buf.length;) off += (await fh.write(buf, off, buf.length - off)).bytesWritten;
      await fh.sync();
    } finally {
      await fh.close();
    }
    if (!mayLand()) {
      await rm(tmp, { force: true });
      return;
    }
    if (opts.keepPrevious) keepPrevious(file);
    renameSync(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  try {
    const d = await open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    // Some file systems refuse fsync on a directory: the rename has still happened.
  }
}

/** Removes `<file>.*.tmp` left by a crash mid-save (the rename never happened, so the real file is whole). */
export function removeStaleTemps(file: string): void {
  const name = basename(file);
  let names: string[];
  try {
    names = readdirSync(dirname(file));
  } catch {
    return;
  }
  for (const n of names) {
    if (n.startsWith(`${name}.`) && n.endsWith('.tmp')) rmSync(join(dirname(file), n), { force: true });
  }
}

/** How a store's load recovered from an unusable newest file (StateStore.recovery). */
export type StateRecovery = 'previous' | 'lost';

/** A state file's text; non-blocking and checked on the fd, so a FIFO or device in stateDir cannot hang the start. */
function readStateFile(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSyncChecked(fd);
    const buf = Buffer.alloc(st);
    let n = 0;
    while (n < buf.length) {
      const r = readSync(fd, buf, n, buf.length - n, n);
      if (r === 0) break;
      n += r;
    }
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The size of a regular file open at `fd`; anything else is an error (code EINVAL). */
function fstatSyncChecked(fd: number): number {
  const st = fstatSync(fd);
  if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EINVAL' });
  return st.size;
}

/** Keyed records in one JSON file (`{version: 1, <section>: {key: record}}`), saved atomically. */
export class KeyedStore<V> {
  protected readonly records = new Map<string, V>();
  protected dirty = false;
  private lastSave = Number.NEGATIVE_INFINITY;
  private lastError = '';
  /** Generation of the newest save started, and of the newest one renamed into place. */
  private started = 0;
  private landed = 0;
  private inflight?: Promise<void>;

  constructor(
    readonly file: string,
    private readonly section: string,
    private readonly valid: (v: unknown) => v is V,
    private readonly same: (a: V, b: V) => boolean = (a, b) => a === b,
  ) {}

  /**
   * How the last load() went when it was not clean: `previous`, the newest file was unusable and the generation
   * before it was loaded (up to one save interval older: those lines are read again, as after a kill -9); `lost`,
   * neither was usable and the state is empty (a follower then reads what it would have skipped, see src/sources/logs/tail/follow.ts).
   */
  recovery?: StateRecovery;
  /**
   * False once the newest file was found unusable: until a save has replaced it, it is not kept as `.prev` (the
   * generation that was usable stays there).
   */
  private newestUsable = true;

  /**
   * Loads the saved state: a missing file (and no previous generation) is a first start; a corrupt or unreadable
   * one falls back to the previous generation, else to an empty state; both are reported (`error`, `recovery`).
   */
  load(): { error?: string; recovery?: StateRecovery } {
    removeStaleTemps(this.file); // `<file>.prev.*.tmp` too
    const newest = this.read(this.file);
    if (newest.ok) return {};
    this.newestUsable = newest.missing;
    const previous = this.read(previousOf(this.file));
    if (previous.ok) {
      this.recovery = 'previous';
      return {
        error: `${newest.missing ? `${this.file} is missing` : newest.error}; resumed from the previous generation ${previousOf(this.file)} (lines since its save are read again)`,
        recovery: 'previous',
      };
    }
    if (newest.missing && previous.missing) return {};
    this.records.clear();
    this.loadExtra({});
    this.recovery = 'lost';
    return {
      error: `${newest.missing ? `${this.file} is missing` : newest.error}, and no usable previous generation (${previous.missing ? 'none' : previous.error}): no saved state`,
      recovery: 'lost',
    };
  }

  /** Reads and applies one generation; nothing is applied unless it parses whole. */
  private read(file: string): { ok: true } | { ok: false; missing: boolean; error: string } {
    let text: string;
    try {
      text = readStateFile(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return { ok: false, missing: code === 'ENOENT', error: `cannot read ${file}: ${code ?? String(err)}` };
    }
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new Error('not an object');
      const section = parsed[this.section] ?? {};
      if (typeof section !== 'object' || section === null || Array.isArray(section))
        throw new Error(`"${this.section}" is not an object`);
    } catch (err) {
      return { ok: false, missing: false, error: `corrupt ${file}: ${(err as Error).message}` };
    }
    this.records.clear();
    for (const [k, v] of Object.entries(parsed[this.section] ?? {}))
      if (this.valid(v)) this.records.set(k, v);
    this.loadExtra(parsed);
    return { ok: true };
  }

  get(key: string): V | undefined {
    return this.records.get(key);
  }

  set(key: string, v: V): void {
    const prev = this.records.get(key);
    if (prev !== undefined && this.same(prev, v)) return;
    this.records.set(key, v);
    this.dirty = true;
  }

  delete(key: string): void {
    if (this.records.delete(key)) this.dirty = true;
  }

  get isDirty(): boolean {
    return this.dirty;
  }

  /** Saves when dirty; throws the write error (the previous file stays whole). */
  save(): void {
    if (this.dirty) this.writeNow();
  }

  /** Writes the records now, synchronously; a background save still in flight will not land over them. */
  private writeNow(): void {
    const gen = ++this.started;
    writeFileAtomic(this.file, this.text(), { keepPrevious: this.newestUsable });
    this.landed = gen;
    this.dirty = false;
    this.newestUsable = true;
  }

  /** Resolves when no background save is in flight. */
  async settled(): Promise<void> {
    await this.inflight;
  }

  private text(): string {
    return JSON.stringify({ version: 1, [this.section]: Object.fromEntries(this.records), ...this.extra() });
  }

  /**
   * Saves at most every `everyMs`, in the background (writeFileAtomicAsync), one save at a time; `force` (a
   * stop) saves now, synchronously. A failure is reported once per streak of the same error (a full disk is
   * one report, not one per save attempt) and retried on the next call.
   */
  saveThrottled(now: number, everyMs: number, force: boolean, onError: (message: string) => void): void {
    // A background save in flight may yet fail (and mark the records dirty again): a stop writes them anyway.
    const pending = this.dirty || (force && this.inflight !== undefined);
    if (!pending || (!force && now - this.lastSave < everyMs)) return;
    if (!force && this.inflight) return;
    this.lastSave = now;
    const failed = (err: unknown) => {
      const msg = `saving ${this.file}: ${String((err as NodeJS.ErrnoException).code ?? err)}`;
      if (msg === this.lastError) return;
      this.lastError = msg;
      onError(msg);
    };
    if (force) {
      try {
        this.writeNow();
        this.lastError = '';
      } catch (err) {
        failed(err);
      }
      return;
    }
    const gen = ++this.started;
    const text = this.text();
    this.dirty = false;
    this.inflight = writeFileAtomicAsync(
      this.file,
      text,
      () => {
        if (gen < this.landed) return false;
        this.landed = gen;
        return true;
      },
      { keepPrevious: this.newestUsable },
    )
      .then(
        () => {
          this.lastError = '';
          this.newestUsable = true;
        },
        (err: unknown) => {
          // Changed or not since, the records must reach the disk: the next due save retries.
          this.dirty = true;
          failed(err);
        },
      )
      .finally(() => {
        this.inflight = undefined;
      });
  }

  /** More top-level fields to save beside the section. */
  protected extra(): Record<string, unknown> {
    return {};
  }

  protected loadExtra(_parsed: Record<string, unknown>): void {}
}

/** The cursor of the last journal entry read, per journal source (journald's equivalent of an offset). */
export class CursorStore extends KeyedStore<string> {
  constructor(stateDir: string, name: string) {
    super(
      join(stateDir, `journal-cursors-${name}.json`),
      'cursors',
      (v): v is string => typeof v === 'string' && v !== '',
    );
  }
}
