// The events journal: transitions, critical log events, probe failure streaks, remediations and file
// changes, kept in a ring in memory (for /api/events and the status page) and appended as JSONL to
// stateDir/events.jsonl, rotated to events.jsonl.1 past a size cap. On start the ring is refilled from the
// file's tail, so a restart keeps the recent history. A failed append (ENOSPC) is cut back to the last whole
// line and retried later: a torn line never swallows the next event (issue 16 item 11).
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { open, rename, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../lib/logger.js';
import { redactor } from '../../lib/redact.js';
import type { JournalEventType } from '../../core/vocabulary.js';
import { readJournalEntry, type JournalEvent, type JournalEventOf, type NewJournalEvent } from './events.js';

export type { JournalEvent, NewJournalEvent } from './events.js';

export interface JournalOptions {
  /** Where events.jsonl lives; memory only when undefined or not writable. */
  dir?: string;
  logger: Logger;
  ringSize?: number;
  maxFileBytes?: number;
  /** Lines waiting to be written beyond this are dropped (and counted), so a stuck disk cannot grow memory. */
  maxPending?: number;
  /** A write failed (once per streak of the same error); the lines are kept and retried. */
  onWriteError?: (message: string) => void;
  /** How long after a failed write it is tried again. */
  retryMs?: number;
}

export const JOURNAL_FILE = 'events.jsonl';

export interface JournalQuery {
  since?: number;
  afterSeq?: number;
  target?: string;
  /** A type name; an unknown one (from /api/events) matches nothing. */
  type?: string;
  limit?: number;
}

/**
 * The state history (what the status page's strip is drawn from) is kept in a ring of its own: no flood of other
 * events (2,500 critical log lines from one tool call, issue 37 item 7) can push a transition out of memory.
 */
const STATE_TYPES: ReadonlySet<string> = new Set<JournalEventType>(['transition', 'diagnosis']);

export class Journal {
  /** Every event but the state history, oldest first. */
  private readonly ring: JournalEvent[] = [];
  /** Transitions and diagnosis changes, oldest first (ringSize of them). */
  private readonly states: JournalEvent[] = [];
  private readonly ringSize: number;
  private readonly maxFileBytes: number;
  private readonly maxPending: number;
  private readonly file: string | undefined;
  private pending: string[] = [];
  private writing: Promise<void> | undefined;
  private readonly listeners = new Set<(e: JournalEvent) => void>();
  private seq = 0;
  private size = 0;
  /** The file ends in a torn line (a crash mid-write): the next write starts a new line first. */
  private torn = false;
  private lastError = '';
  private retry: NodeJS.Timeout | undefined;
  dropped = 0;

  constructor(private readonly opts: JournalOptions) {
    this.ringSize = opts.ringSize ?? 2000;
    this.maxFileBytes = opts.maxFileBytes ?? 10 * 1024 * 1024;
    this.maxPending = opts.maxPending ?? 10_000;
    if (opts.dir !== undefined) {
      try {
        mkdirSync(opts.dir, { recursive: true });
        this.file = join(opts.dir, JOURNAL_FILE);
        this.restore(this.file);
      } catch (err) {
        opts.logger.warn({ err: (err as Error).message, dir: opts.dir }, 'event journal kept in memory only');
        this.file = undefined;
      }
    }
  }

  private restore(file: string): void {
    let text: string;
    try {
      this.size = statSync(file).size;
      text = readFileSync(file, 'utf8');
    } catch {
      this.size = 0;
      return;
    }
    this.torn = text.length > 0 && !text.endsWith('\n');
    const lines = text.split('\n').filter((l) => l !== '');
    // Newest first, until both rings are full: the state history reaches back past a flood of other events.
    const ring: JournalEvent[] = [];
    const states: JournalEvent[] = [];
    for (let i = lines.length - 1; i >= 0; i--) {
      if (ring.length >= this.ringSize && states.length >= this.ringSize) break;
      try {
        const e = readJournalEntry(JSON.parse(lines[i]!));
        if (e === undefined) continue;
        this.seq = Math.max(this.seq, e.seq);
        const into = STATE_TYPES.has(e.type) ? states : ring;
        if (into.length < this.ringSize) into.push(e);
      } catch {
        // A torn last line from a crash: skip it.
      }
    }
    this.ring.push(...ring.reverse());
    this.states.push(...states.reverse());
  }

  append(e: NewJournalEvent): JournalEvent {
    // Redacted before it is kept anywhere (ring, file, listeners): events quote log lines, argv and diffs.
    const ev = JSON.parse(redactor.redact(JSON.stringify({ seq: ++this.seq, ...e }))) as JournalEvent;
    const ring = STATE_TYPES.has(ev.type) ? this.states : this.ring;
    ring.push(ev);
    if (ring.length > this.ringSize) ring.splice(0, ring.length - this.ringSize);
    for (const l of this.listeners) {
      try {
        l(ev);
      } catch (err) {
        this.opts.logger.error({ err }, 'event journal listener threw');
      }
    }
    if (this.file !== undefined) {
      if (this.pending.length >= this.maxPending) this.dropped++;
      else this.pending.push(JSON.stringify(ev) + '\n');
      this.kick();
    }
    return ev;
  }

  /** Calls `fn` with every event appended from now on; returns the unsubscribe function. */
  subscribe(fn: (e: JournalEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Events oldest first; `since` is Unix ms (exclusive), `afterSeq` a sequence number (exclusive). */
  query<T extends JournalEventType>(q: JournalQuery & { type: T }): JournalEventOf<T>[];
  query(q?: JournalQuery): JournalEvent[];
  query(q: JournalQuery = {}): JournalEvent[] {
    const keep = (e: JournalEvent) =>
      (q.since === undefined || e.time > q.since) &&
      (q.afterSeq === undefined || e.seq > q.afterSeq) &&
      (q.target === undefined || e.target === q.target) &&
      (q.type === undefined || e.type === q.type);
    const out = mergeBySeq(this.ring.filter(keep), this.states.filter(keep));
    const limit = q.limit ?? 1000;
    return out.length > limit ? out.slice(-limit) : out;
  }

  /** When the oldest event still held was appended (how far back the history reaches). */
  oldestTime(): number | undefined {
    const a = this.ring[0]?.time;
    const b = this.states[0]?.time;
    return a === undefined ? b : b === undefined ? a : Math.min(a, b);
  }

  /** Resolves once every appended event is on disk. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** Starts the writer when lines wait (with none, drain() would finish before `writing` is even set). */
  private kick(): void {
    if (this.writing || this.pending.length === 0 || this.file === undefined) return;
    this.writing = this.drain();
  }

  private async drain(): Promise<void> {
    let batch = '';
    try {
      while (this.pending.length > 0 && this.file !== undefined) {
        batch = this.pending.join('');
        this.pending = [];
        if (this.size > 0 && this.size + Buffer.byteLength(batch) > this.maxFileBytes)
          await this.rotate(this.file);
        await this.write(this.file, batch);
        batch = '';
        if (this.lastError !== '') {
          this.lastError = '';
          this.opts.logger.info({ file: this.file }, 'event journal writable again');
        }
      }
    } catch (err) {
      // Kept for the retry, oldest first, within the pending cap.
      const lines = batch
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l + '\n');
      const room = Math.max(0, this.maxPending - this.pending.length);
      this.dropped += Math.max(0, lines.length - room);
      this.pending = [...lines.slice(lines.length - Math.min(room, lines.length)), ...this.pending];
      const msg = `event journal write failed: ${String((err as NodeJS.ErrnoException).code ?? (err as Error).message)}`;
      if (msg !== this.lastError) {
        this.lastError = msg;
        this.opts.logger.error({ err: (err as Error).message, file: this.file }, msg);
        this.opts.onWriteError?.(msg);
      }
      this.retry ??= setTimeout(() => {
        this.retry = undefined;
        this.kick();
      }, this.opts.retryMs ?? 1000);
      this.retry.unref();
    } finally {
      this.writing = undefined;
    }
  }

  /**
   * Appends whole lines. A short or failed write (a full disk) is cut back to where the file was, so the file
   * ends on a line boundary; if even that fails, the next write starts on a new line.
   */
  private async write(file: string, batch: string): Promise<void> {
    const fh = await open(file, 'a');
    const before = this.size;
    try {
      const buf = Buffer.from(this.torn && before > 0 ? '\n' + batch : batch);
      for (let off = 0; off < buf.length;) {
        const { bytesWritten } = await fh.write(buf, off, buf.length - off);
        off += bytesWritten;
      }
      this.torn = false;
      this.size = before + buf.length;
    } catch (err) {
      await truncate(file, before).catch(() => {
        this.torn = true;
      });
      throw err;
    } finally {
      await fh.close().catch(() => {});
    }
  }

  private async rotate(file: string): Promise<void> {
    await rename(file, `${file}.1`);
    this.size = 0;
    // Another writer (an old runtime during reload) may have appended: trust the file system.
    this.size = await stat(file).then(
      (s) => s.size,
      () => 0,
    );
  }
}

/** Two lists each in append order (seq ascending), as one. */
function mergeBySeq(a: JournalEvent[], b: JournalEvent[]): JournalEvent[] {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  const out: JournalEvent[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(a[i]!.seq <= b[j]!.seq ? a[i++]! : b[j++]!);
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}
