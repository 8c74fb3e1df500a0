// Which bytes of each log file were written around an incident. The log watcher reports how far it had read
// each file and when (a checkpoint); the window's first byte is where the follower stood at the window's start,
// its last byte the file's end at capture time. Rule matches are remembered too, so the lines that moved the
// detector are marked in the bundle. Bounded: checkpoints are thinned to one per file per second, kept in a fixed
// typed store per file (older ones ever sparser, Checkpoints), and the files are capped.
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { LogEventSignal, LogMemberMatch, Severity } from '../../core/signals.js';

/** A remembered match: a member of another event's incident names that event's rule (no event of its own). */
export type LogMatch = Omit<LogMemberMatch, 'memberOf'> & { memberOf?: string };

export interface WindowMark {
  /** 1-based line number within the window file. */
  line: number;
  offset: number;
  rule: string;
  severity: Severity;
  /** A critical match: a record the detector acts on. */
  trigger: boolean;
  text: string;
  /** A line of the incident whose event is the `memberOf` rule's (counted, listed, no event of its own). */
  memberOf?: string;
}

export interface LogWindow {
  service: string;
  file: string;
  /** Byte range of the file the window holds. */
  start: number;
  end: number;
  /** Bytes before `start` that belonged to the window but were over the size cap. */
  droppedBytes: number;
  text: Buffer;
  marks: WindowMark[];
}

const CHECKPOINT_EVERY_MS = 1000;
/**
 * Checkpoints kept per file. They were objects in an array capped at 10,000 (2.8 h at one a second), ~80 bytes each
 * on the heap: a followed file's grew by ~290 KB an hour to 0.8 MB, 80 MB for bench:steady's 50 targets (100 files)
 * after 2.8 h. Now two Float64Arrays of this many (16 KiB a file): the newest half at one a second (8.5 minutes, past
 * the default 5 m window), older ones spaced by their age (Checkpoints.thin).
 */
export const CHECKPOINTS_KEPT = 1024;
/** Older checkpoints kept per e-fold of their age (Checkpoints.thin). */
const SPREAD = 32;
/**
 * Files remembered per target. A glob source (pod logs) names a new file for every pod; a file whose last read is
 * the oldest is forgotten first (its window, if it is still there, starts at byte 0, capped by maxLogBytes).
 */
export const FILES_KEPT = 64;
const MAX_MATCHES = 2000;

/** Where the follower of one file stood, when: oldest first; at most CHECKPOINTS_KEPT. */
class Checkpoints {
  private readonly time = new Float64Array(CHECKPOINTS_KEPT);
  private readonly offset = new Float64Array(CHECKPOINTS_KEPT);
  private n = 0;

  constructor(readonly service: string) {}

  get size(): number {
    return this.n;
  }

  /** When the newest checkpoint was taken (-Infinity: none). */
  get lastAt(): number {
    return this.n === 0 ? -Infinity : this.time[this.n - 1]!;
  }

  /**
   * The follower had read up to `offset` at `time`. When the store is full its older half is thinned (thin): the
   * newest half stays exact, older points are the sparser the older they are, so a window that starts long ago
   * still starts no later than it should (startOffset), only a little earlier.
   */
  note(time: number, offset: number): void {
    const n = this.n;
    if (n > 0 && offset < this.offset[n - 1]!) {
      // Truncated in place (copytruncate): what came before is gone from this file.
      this.n = 0;
    } else if (n >= 2 && time - this.time[n - 2]! < CHECKPOINT_EVERY_MS) {
      // Thinning to about one point a second: the newest point moves forward until a second has passed.
      this.time[n - 1] = time;
      this.offset[n - 1] = offset;
      return;
    }
    if (this.n === CHECKPOINTS_KEPT) this.thin();
    this.time[this.n] = time;
    this.offset[this.n] = offset;
    this.n++;
  }

  /**
   * Makes room in a full store: the newest half stays as it is; in the older half a point is kept only when it is at
   * least 1/SPREAD of its age after the point kept before it (the first always), and with a tighter spacing again
   * until at least half of that half is free. So the older points are spaced by their age: about SPREAD of them per
   * e-fold of age, fewer when half of the half must be freed; a window that starts an hour back starts 0.5–2 minutes
   * early, half a day back 3–30 minutes (a day, a week and a year of reads at one a second; ~20 ns a read). Halving every second point instead, run at every fill, left
   * nothing from an hour before (each point survives a fill with probability 1/2).
   */
  private thin(): void {
    const half = CHECKPOINTS_KEPT / 2;
    const now = this.time[this.n - 1]!;
    let m = half;
    for (let spread = SPREAD; m > half / 2; spread /= 2) {
      let w = 0;
      let last = -Infinity;
      for (let r = 0; r < m; r++) {
        const t = this.time[r]!;
        if (r > 0 && t - last < Math.max(CHECKPOINT_EVERY_MS, (now - t) / spread)) continue;
        this.time[w] = t;
        this.offset[w] = this.offset[r]!;
        w++;
        last = t;
      }
      m = w;
    }
    this.time.copyWithin(m, half, CHECKPOINTS_KEPT);
    this.offset.copyWithin(m, half, CHECKPOINTS_KEPT);
    this.n = m + half;
  }

  /** The follower's position at the last checkpoint at or before `from` (0 if none). */
  startOffset(from: number): number {
    let start = 0;
    for (let i = 0; i < this.n; i++) {
      if (this.time[i]! > from) break;
      start = this.offset[i]!;
    }
    return start;
  }
}

export class LogWindows {
  private readonly checkpoints = new Map<string, Checkpoints>();
  private readonly matches: LogMatch[] = [];

  /** The follower of `file` had read up to `offset` at `time`. */
  noteRead(service: string, file: string, offset: number, time: number): void {
    let c = this.checkpoints.get(file);
    if (c === undefined) {
      if (this.checkpoints.size >= FILES_KEPT) this.forgetStalest();
      c = new Checkpoints(service);
      this.checkpoints.set(file, c);
    }
    c.note(time, offset);
  }

  /** Forgets the file read longest ago (a walk of at most FILES_KEPT, only when a new file comes). */
  private forgetStalest(): void {
    let stalest: string | undefined;
    let at = Infinity;
    for (const [file, c] of this.checkpoints) {
      if (c.lastAt < at) {
        at = c.lastAt;
        stalest = file;
      }
    }
    if (stalest !== undefined) this.checkpoints.delete(stalest);
  }

  /** How many checkpoints are kept for `file`, and for how many files (tests: the bounds). */
  kept(file: string): { points: number; files: number } {
    return { points: this.checkpoints.get(file)?.size ?? 0, files: this.checkpoints.size };
  }

  noteMatch(e: LogEventSignal): void {
    this.matches.push({
      service: e.service,
      file: e.file,
      offset: e.offset,
      time: e.time,
      rule: e.rule,
      severity: e.severity,
      line: e.line.split('\n')[0]!.slice(0, 500),
    });
    if (this.matches.length > MAX_MATCHES) this.matches.splice(0, this.matches.length - MAX_MATCHES);
  }

  /** A line folded into an incident: marked in the bundle as a member of that incident's event. */
  noteMember(e: LogMemberMatch): void {
    this.matches.push({ ...e, line: e.line.split('\n')[0]!.slice(0, 500) });
    if (this.matches.length > MAX_MATCHES) this.matches.splice(0, this.matches.length - MAX_MATCHES);
  }

  files(): Array<{ service: string; file: string }> {
    return [...this.checkpoints].map(([file, c]) => ({ service: c.service, file }));
  }

  /** Where the window starting at `from` begins in `file`: the follower's position then (0 if unknown). */
  startOffset(file: string, from: number): number {
    return this.checkpoints.get(file)?.startOffset(from) ?? 0;
  }

  /** Reads each followed file's window [from, now], at most maxBytes per file (the newest bytes kept). */
  async read(from: number, maxBytes: number, signal?: AbortSignal): Promise<LogWindow[]> {
    const out: LogWindow[] = [];
    for (const { service, file } of this.files()) {
      signal?.throwIfAborted();
      const w = await this.readOne(service, file, from, maxBytes);
      if (w) out.push(w);
    }
    return out;
  }

  private async readOne(
    service: string,
    file: string,
    from: number,
    maxBytes: number,
  ): Promise<LogWindow | undefined> {
    // Non-blocking, and the opened handle is what is checked: a FIFO swapped in for the log would block open()
    // on a libuv pool thread for good (four of them hang every fs call and DNS lookup), a device be read as a log.
    let fh: FileHandle;
    let size: number;
    try {
      fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
      return undefined;
    }
    try {
      const st = await fh.stat();
      if (!st.isFile()) {
        await fh.close();
        return undefined;
      }
      size = st.size;
    } catch {
      await fh.close().catch(() => undefined);
      return undefined;
    }
    let start = this.startOffset(file, from);
    if (start > size) start = 0; // truncated since: the file is all new
    let dropped = 0;
    if (size - start > maxBytes) {
      dropped = size - maxBytes - start;
      start = size - maxBytes;
    }
    const text = Buffer.alloc(size - start);
    let n = 0;
    try {
      while (n < text.length) {
        const r = await fh.read(text, n, text.length - n, start + n);
        if (r.bytesRead === 0) break;
        n += r.bytesRead;
      }
    } finally {
      await fh.close();
    }
    let body = text.subarray(0, n);
    if (dropped > 0) {
      // Cut to a whole first line.
      const nl = body.indexOf(10);
      if (nl >= 0) {
        dropped += nl + 1;
        start += nl + 1;
        body = body.subarray(nl + 1);
      }
    }
    return {
      service,
      file,
      start,
      end: start + body.length,
      droppedBytes: dropped,
      text: body,
      marks: this.marksIn(file, start, body),
    };
  }

  private marksIn(file: string, start: number, body: Buffer): WindowMark[] {
    const end = start + body.length;
    const inside = this.matches
      .filter((m) => m.file === file && m.offset >= start && m.offset < end)
      .sort((a, b) => a.offset - b.offset);
    const marks: WindowMark[] = [];
    let line = 1;
    let pos = 0;
    for (const m of inside) {
      const rel = m.offset - start;
      while (pos < rel) {
        const nl = body.indexOf(10, pos);
        if (nl < 0 || nl >= rel) break;
        line++;
        pos = nl + 1;
      }
      marks.push({
        line,
        offset: m.offset,
        rule: m.rule,
        severity: m.severity,
        // A member raised no event of its own: the detector acted on its incident's event, not on it.
        trigger: m.severity === 'critical' && m.memberOf === undefined,
        text: m.line,
        ...(m.memberOf !== undefined ? { memberOf: m.memberOf } : {}),
      });
    }
    return marks;
  }
}
