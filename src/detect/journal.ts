// The events journal: transitions, critical log events, probe failure streaks, remediations and file
// changes, kept in a ring in memory (for /api/events and the status page) and appended as JSONL to
// stateDir/events.jsonl, rotated to events.jsonl.1 past a size cap. On start the ring is refilled from the
// file's tail, so a restart keeps the recent history.
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { appendFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../logger.js';
import { redactor } from '../redact.js';

export interface JournalEvent {
  seq: number;
  /** Unix ms. */
  time: number;
  target: string;
  type: string;
  summary: string;
  data?: Record<string, unknown>;
}

export interface JournalOptions {
  /** Where events.jsonl lives; memory only when undefined or not writable. */
  dir?: string;
  logger: Logger;
  ringSize?: number;
  maxFileBytes?: number;
  /** Lines waiting to be written beyond this are dropped (and counted), so a stuck disk cannot grow memory. */
  maxPending?: number;
}

export const JOURNAL_FILE = 'events.jsonl';

export class Journal {
  private readonly ring: JournalEvent[] = [];
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
    for (const line of lines.slice(-this.ringSize)) {
      try {
        const e = JSON.parse(line) as JournalEvent;
        if (typeof e.seq === 'number' && typeof e.time === 'number') {
          this.ring.push(e);
          this.seq = Math.max(this.seq, e.seq);
        }
      } catch {
        // A torn last line from a crash: skip it.
      }
    }
  }

  append(e: Omit<JournalEvent, 'seq'>): JournalEvent {
    // Redacted before it is kept anywhere (ring, file, listeners): events quote log lines, argv and diffs.
    const ev = JSON.parse(redactor.redact(JSON.stringify({ seq: ++this.seq, ...e }))) as JournalEvent;
    this.ring.push(ev);
    if (this.ring.length > this.ringSize) this.ring.splice(0, this.ring.length - this.ringSize);
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
      this.writing ??= this.drain();
    }
    return ev;
  }

  /** Calls `fn` with every event appended from now on; returns the unsubscribe function. */
  subscribe(fn: (e: JournalEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Events oldest first; `since` is Unix ms (exclusive), `afterSeq` a sequence number (exclusive). */
  query(
    q: { since?: number; afterSeq?: number; target?: string; type?: string; limit?: number } = {},
  ): JournalEvent[] {
    const out = this.ring.filter(
      (e) =>
        (q.since === undefined || e.time > q.since) &&
        (q.afterSeq === undefined || e.seq > q.afterSeq) &&
        (q.target === undefined || e.target === q.target) &&
        (q.type === undefined || e.type === q.type),
    );
    const limit = q.limit ?? 1000;
    return out.length > limit ? out.slice(-limit) : out;
  }

  /** Resolves once every appended event is on disk. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.length > 0 && this.file !== undefined) {
        let batch = this.pending.join('');
        this.pending = [];
        if (this.size > 0 && this.size + Buffer.byteLength(batch) > this.maxFileBytes)
          await this.rotate(this.file);
        if (this.torn && this.size > 0) batch = '\n' + batch;
        this.torn = false;
        await appendFile(this.file, batch);
        this.size += Buffer.byteLength(batch);
      }
    } catch (err) {
      this.opts.logger.error({ err: (err as Error).message, file: this.file }, 'event journal write failed');
    } finally {
      this.writing = undefined;
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
