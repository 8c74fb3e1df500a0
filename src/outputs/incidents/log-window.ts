// Which bytes of each log file were written around an incident. The log watcher reports how far it had read
// each file and when (a checkpoint); the window's first byte is where the follower stood at the window's start,
// its last byte the file's end at capture time. Rule matches are remembered too, so the lines that moved the
// detector are marked in the bundle. Bounded: checkpoints are thinned to one per file per second and capped.
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { LogEventSignal, LogMemberMatch, Severity } from '../../core/signals.js';

interface Checkpoint {
  time: number;
  offset: number;
}

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
const MAX_CHECKPOINTS = 10_000;
const MAX_MATCHES = 2000;

export class LogWindows {
  private readonly checkpoints = new Map<string, { service: string; points: Checkpoint[] }>();
  private readonly matches: LogMatch[] = [];

  /** The follower of `file` had read up to `offset` at `time`. */
  noteRead(service: string, file: string, offset: number, time: number): void {
    let c = this.checkpoints.get(file);
    if (c === undefined) {
      c = { service, points: [] };
      this.checkpoints.set(file, c);
    }
    const last = c.points.at(-1);
    const before = c.points.at(-2);
    if (last !== undefined && offset < last.offset) {
      // Truncated in place (copytruncate): what came before is gone from this file.
      c.points = [];
    } else if (last !== undefined && before !== undefined && time - before.time < CHECKPOINT_EVERY_MS) {
      // Thinning to about one point a second: the newest point moves forward until a second has passed.
      last.time = time;
      last.offset = offset;
      return;
    }
    c.points.push({ time, offset });
    if (c.points.length > MAX_CHECKPOINTS) c.points.splice(0, c.points.length - MAX_CHECKPOINTS);
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
    const points = this.checkpoints.get(file)?.points ?? [];
    let start = 0;
    for (const p of points) {
      if (p.time > from) break;
      start = p.offset;
    }
    return start;
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
