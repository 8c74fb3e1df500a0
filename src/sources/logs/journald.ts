// A log source kind: the systemd journal, read through `journalctl --output=json` (an SGLang or vLLM server
// started by a systemd unit writes there, not to a file). The cursor of the last entry read is saved
// (CursorStore, state-store.ts) in place of an offset, so a restart resumes right after it: nothing read twice,
// nothing skipped, except that a backlog over maxCatchUpBytes is cut to its newest part, as for files.
//
// One cycle: count the backlog after the cursor (a journalctl run without --follow), then follow from the
// cursor, dropping the oldest entries the catch-up limit excludes. `journalctl --follow` cannot follow a
// `--file` (systemd 252: "Failed to get journal fd: Destination address required"), so a file journal is
// polled with --after-cursor instead. journalctl missing, the journal unreadable or journalctl exiting are
// an error callback and a new cycle after `retryMs`, never an exception.
import { spawn, type ChildProcess } from 'node:child_process';
import type { JournalSourceConfig } from '../../config/schema.js';
import { SAVE_EVERY_MS, type CursorStore } from '../../lib/state-store.js';
import type { PositionOptions } from './reader-options.js';

/** One journal entry, as the rules see it. */
export interface JournalEntry {
  /** MESSAGE as bytes (journalctl gives an array of numbers for a message that is not valid UTF-8). */
  text: Buffer;
  /** __REALTIME_TIMESTAMP in Unix ms: when journald received the line. */
  time: number;
  cursor: string;
  unit: string;
}

export type JournalErrorReason = 'missing' | 'unreadable' | 'malformed' | 'io';

export interface JournalFollowerOptions extends PositionOptions {
  journal: JournalSourceConfig;
  cursors: CursorStore;
  /** The cursor's key in the store. */
  key: string;
  onEntry(e: JournalEntry): void;
  /** Called once per error streak (the same error again is silent until something changes). */
  onError?(reason: JournalErrorReason, message: string): void;
  /** The catch-up limit excluded this many entries (of this many message bytes) written while down. */
  onSkip?(entries: number, bytes: number): void;
  /** The journalctl binary (tests point it elsewhere). */
  journalctl?: string;
  retryMs?: number;
  /** A run without --follow (the backlog count, a poll) is killed after this long. */
  runTimeoutMs?: number;
}

interface RawEntry {
  MESSAGE?: unknown;
  __CURSOR?: unknown;
  __REALTIME_TIMESTAMP?: unknown;
  _SYSTEMD_UNIT?: unknown;
}

/** journalctl's arguments for this source: which journal, which entries, JSON with every field in full. */
export function journalArgs(j: JournalSourceConfig): string[] {
  // --all: without it journalctl prints null for a field over 4096 bytes (a long traceback line).
  const args = ['--output=json', '--all', '--no-pager', '--quiet'];
  if (j.directory !== undefined) args.push(`--directory=${j.directory}`);
  if (j.file !== undefined) args.push(`--file=${j.file}`);
  const units = j.unit === undefined ? [] : Array.isArray(j.unit) ? j.unit : [j.unit];
  for (const u of units) args.push(`--unit=${u}`);
  // Matches are FIELD=VALUE (schema-checked), so none can read as an option.
  args.push(...(j.match ?? []));
  return args;
}

/** One parsed line of `journalctl --output=json`; null when it is not an entry. */
export function parseJournalLine(line: string): JournalEntry | null {
  let j: RawEntry;
  try {
    j = JSON.parse(line) as RawEntry;
  } catch {
    return null;
  }
  if (j === null || typeof j !== 'object' || typeof j.__CURSOR !== 'string') return null;
  const m = j.MESSAGE;
  let text: Buffer;
  if (typeof m === 'string') text = Buffer.from(m, 'utf8');
  else if (Array.isArray(m) && m.every((b) => typeof b === 'number')) text = Buffer.from(m as number[]);
  else text = Buffer.alloc(0);
  const us = typeof j.__REALTIME_TIMESTAMP === 'string' ? Number(j.__REALTIME_TIMESTAMP) : NaN;
  return {
    text,
    time: Number.isFinite(us) ? Math.floor(us / 1000) : NaN,
    cursor: j.__CURSOR,
    unit: typeof j._SYSTEMD_UNIT === 'string' ? j._SYSTEMD_UNIT : '',
  };
}

/** Splits a child's stdout into lines (bounded: a line over `max` bytes is dropped and reported). */
class Lines {
  private parts: Buffer[] = [];
  private len = 0;
  private over = false;
  constructor(
    private readonly max: number,
    private readonly onLine: (line: string) => void,
    private readonly onTooLong: () => void,
  ) {}
  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl < 0) break;
      this.add(chunk.subarray(start, nl));
      if (this.over) this.onTooLong();
      else this.onLine(Buffer.concat(this.parts).toString('utf8'));
      this.parts = [];
      this.len = 0;
      this.over = false;
      start = nl + 1;
    }
    if (start < chunk.length) this.add(chunk.subarray(start));
  }
  private add(b: Buffer): void {
    if (this.over) return;
    this.len += b.length;
    if (this.len > this.max) {
      this.over = true;
      this.parts = [];
    } else this.parts.push(b);
  }
}

export class JournalFollower {
  private child?: ChildProcess;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private cursor: string | undefined;
  private lastError = '';
  private readonly now: () => number;
  private readonly bin: string;
  private readonly args: string[];
  private readonly maxLine: number;

  constructor(private readonly o: JournalFollowerOptions) {
    this.now = o.now ?? Date.now;
    this.bin = o.journalctl ?? 'journalctl';
    this.args = journalArgs(o.journal);
    this.cursor = o.cursors.get(o.key);
    // An entry's JSON: its message (journald's LineMax is 48K by default; a non-UTF-8 one is printed as a
    // number array, ~4 characters a byte) plus some 30 fields.
    this.maxLine = 4 << 20;
  }

  start(): void {
    void this.cycle();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    this.child?.kill('SIGTERM');
    this.child = undefined;
    this.save(true);
  }

  /** The cursor of the last entry handed on (or skipped on purpose). */
  get position(): string | undefined {
    return this.cursor;
  }

  private error(reason: JournalErrorReason, message: string): void {
    const tag = `${reason}:${message}`;
    if (tag === this.lastError) return;
    this.lastError = tag;
    this.o.onError?.(reason, message);
  }

  private retry(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.cycle(), this.o.retryMs ?? 5000);
    this.timer.unref();
  }

  /**
   * Where a run begins: after the cursor, else at the first entry. --lines=all in both cases: --follow
   * implies --lines=10, which (systemd 252) also caps what it prints after --after-cursor.
   */
  private startArgs(): string[] {
    return this.cursor !== undefined ? [`--after-cursor=${this.cursor}`, '--lines=all'] : ['--lines=all'];
  }

  private async cycle(): Promise<void> {
    if (this.stopped) return;
    try {
      if (this.cursor === undefined && this.o.from === 'end') {
        // Start after the newest entry there is now, and remember it: entries written from here on are
        // news even if the daemon restarts before the first one arrives.
        const last = await this.run(['--lines=1'], () => undefined);
        if (last.lastCursor !== undefined) this.advance(last.lastCursor);
        if (this.stopped) return;
      }
      // Count what is waiting, then drop the oldest part the catch-up limit excludes.
      const backlog = await this.run(this.startArgs(), () => undefined);
      if (this.stopped) return;
      let skip = Math.max(0, backlog.bytes - this.o.maxCatchUpBytes);
      let skipped = 0;
      let skippedBytes = 0;
      const take = (e: JournalEntry) => {
        if (skip > 0) {
          skip -= e.text.length;
          skipped++;
          skippedBytes += e.text.length;
          this.advance(e.cursor);
          if (skip <= 0) this.o.onSkip?.(skipped, skippedBytes);
          return;
        }
        this.o.onEntry(e);
        this.advance(e.cursor);
      };
      if (this.o.journal.file !== undefined) {
        // Polled: each run reads what was added since the cursor.
        await this.run(this.startArgs(), take);
        this.clearError();
        this.save(false);
        if (this.stopped) return;
        this.timer = setTimeout(() => void this.poll(), this.o.journal.pollInterval);
        this.timer.unref();
        return;
      }
      const ended = await this.run([...this.startArgs(), '--follow'], take, true);
      if (!this.stopped) this.error('unreadable', `journalctl --follow ended (${ended.why})`);
      this.save(true);
      this.retry();
    } catch (err) {
      const e = err as RunError;
      this.error(e.reason ?? 'io', e.message);
      this.save(true);
      this.retry();
    }
  }

  private async poll(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.run(this.startArgs(), (e) => {
        this.o.onEntry(e);
        this.advance(e.cursor);
      });
      this.clearError();
      this.save(false);
      if (this.stopped) return;
      this.timer = setTimeout(() => void this.poll(), this.o.journal.pollInterval);
      this.timer.unref();
    } catch (err) {
      const e = err as RunError;
      this.error(e.reason ?? 'io', e.message);
      this.save(true);
      this.retry();
    }
  }

  private clearError(): void {
    this.lastError = '';
  }

  private advance(cursor: string): void {
    this.cursor = cursor;
    this.o.cursors.set(this.o.key, cursor);
    this.save(false);
  }

  private save(force: boolean): void {
    this.o.cursors.saveThrottled(this.now(), this.o.saveEveryMs ?? SAVE_EVERY_MS, force, (message) =>
      this.o.onSaveError?.(message),
    );
  }

  /**
   * Runs journalctl with `extra` arguments, handing each entry to `each`. Resolves when it exits 0 (or, when
   * following, whenever it exits); rejects with a RunError when it cannot start or fails.
   */
  private run(
    extra: string[],
    each: (e: JournalEntry) => void,
    follow = false,
  ): Promise<{ bytes: number; lastCursor?: string; why: string }> {
    return new Promise((resolve, reject) => {
      let bytes = 0;
      let lastCursor: string | undefined;
      let stderr = '';
      let child: ChildProcess;
      try {
        child = spawn(this.bin, [...this.args, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (err) {
        reject(new RunError('missing', `cannot run ${this.bin}: ${(err as Error).message}`));
        return;
      }
      this.child = child;
      let timeout: NodeJS.Timeout | undefined;
      if (!follow) {
        timeout = setTimeout(() => child.kill('SIGKILL'), this.o.runTimeoutMs ?? 60_000);
        timeout.unref();
      }
      const lines = new Lines(
        this.maxLine,
        (line) => {
          if (this.stopped) return;
          const e = parseJournalLine(line);
          if (e === null) {
            this.error('malformed', 'journalctl printed a line that is not a JSON entry');
            return;
          }
          bytes += e.text.length;
          lastCursor = e.cursor;
          each(e);
        },
        () => this.error('malformed', `a journal entry over ${this.maxLine} bytes of JSON was dropped`),
      );
      child.stdout!.on('data', (c: Buffer) => lines.push(c));
      child.stderr!.on('data', (c: Buffer) => {
        if (stderr.length < 4096) stderr += c.toString('utf8');
      });
      child.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timeout);
        if (this.child === child) this.child = undefined;
        reject(
          new RunError(
            err.code === 'ENOENT' ? 'missing' : 'io',
            err.code === 'ENOENT' ? `${this.bin} not found` : `${this.bin}: ${err.message}`,
          ),
        );
      });
      child.on('close', (code, signal) => {
        clearTimeout(timeout);
        if (this.child === child) this.child = undefined;
        const why = signal ? `signal ${signal}` : `exit ${code}`;
        const msg = stderr.trim().split('\n')[0] ?? '';
        if (!follow && code !== 0) {
          reject(new RunError('unreadable', `${this.bin} ${why}${msg ? `: ${msg}` : ''}`));
          return;
        }
        resolve({ bytes, lastCursor, why: `${why}${msg ? `: ${msg}` : ''}` });
      });
    });
  }
}

class RunError extends Error {
  constructor(
    readonly reason: JournalErrorReason,
    message: string,
  ) {
    super(message);
  }
}
