// Watched files per target (serve scripts, unit files, env files): polls them, and on every change
// reports the new sha256, the time and a bounded unified diff. Polling (not fs.watch) because editors
// replace files by rename and config management rewrites them in place; both look the same to a hash.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import type { Logger } from '../../lib/logger.js';
import type { TargetMetrics } from '../../metrics.js';
import type { FileChangeSignal } from '../../core/signals.js';
import { redactor } from '../../lib/redact.js';
import { unifiedDiff } from './diff.js';
import { MAX_WATCHED_BYTES } from '../../lib/small-file.js';
import { envDiff, envSecrets, isEnvFile } from './env-file.js';

/** A read that takes longer (a hung network mount) is abandoned; the file counts as unchanged this round. */
const READ_TIMEOUT_MS = 10_000;

function envChange(before: string | undefined, cur: Seen, path: string): string {
  if (cur.hash === null) return `file deleted: ${path}\n`;
  if (cur.text === undefined) return `file changed (${cur.error ?? 'not read'}): ${path}\n`;
  return envDiff(before ?? '', cur.text, path);
}

export interface FileWatchOptions {
  target: string;
  paths: string[];
  metrics: Pick<TargetMetrics, 'watchedFileChange'>;
  logger: Logger;
  onChange: (c: FileChangeSignal) => void;
  intervalMs?: number;
  /** Files over this size are hashed in full but not diffed. */
  maxDiffBytes?: number;
  now?: () => number;
}

interface Seen {
  hash: string | null;
  /** Why the content could not be hashed (not a regular file, too large). */
  error?: string;
  /** Content kept for the next diff (only for files up to maxDiffBytes). */
  text?: string;
  changedAt?: number;
}

export interface WatchedFile {
  path: string;
  hash: string | null;
  changedAt?: number;
}

export class FileWatch {
  private readonly seen = new Map<string, Seen>();
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private readonly now: () => number;
  private readonly maxDiff: number;

  constructor(private readonly opts: FileWatchOptions) {
    this.now = opts.now ?? Date.now;
    this.maxDiff = opts.maxDiffBytes ?? 1024 * 1024;
  }

  /** Records the current content of every path as the baseline (no change reported), then polls. */
  async start(): Promise<void> {
    for (const path of this.opts.paths) {
      const cur = await this.readWithTimeout(path);
      if (cur === undefined) continue;
      this.seen.set(path, cur.seen);
      if (cur.mtimeMs !== undefined) {
        this.opts.metrics.watchedFileChange.set(
          { target: this.opts.target, path },
          Math.floor(cur.mtimeMs) / 1000,
        );
      }
    }
    this.timer = setInterval(() => void this.check(), this.opts.intervalMs ?? 5000);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.checking;
  }

  files(): WatchedFile[] {
    return [...this.seen].map(([path, s]) => ({ path, hash: s.hash, changedAt: s.changedAt }));
  }

  /** One poll of every path (joined when one is already running). */
  check(): Promise<void> {
    this.checking ??= this.checkAll().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  private async checkAll(): Promise<void> {
    for (const path of this.opts.paths) {
      const prev = this.seen.get(path) ?? { hash: null };
      const cur = await this.readWithTimeout(path);
      if (cur === undefined || cur.seen.hash === prev.hash) continue;
      const time = this.now();
      cur.seen.changedAt = time;
      this.seen.set(path, cur.seen);
      let diff: string;
      if (isEnvFile(path)) diff = envChange(prev.text, cur.seen, path);
      else if (cur.seen.error !== undefined) diff = `${cur.seen.error}: ${path}\n`;
      else if (prev.text !== undefined && cur.seen.text !== undefined)
        diff = unifiedDiff(prev.text, cur.seen.text, path);
      else if (cur.seen.hash === null) diff = `file deleted: ${path}\n`;
      else if (prev.hash === null)
        diff = cur.seen.text !== undefined ? unifiedDiff('', cur.seen.text, path) : `file created: ${path}\n`;
      else diff = `file changed (over ${this.maxDiff} bytes, not diffed): ${path}\n`;
      this.opts.metrics.watchedFileChange.set({ target: this.opts.target, path }, time / 1000);
      this.opts.logger.warn({ target: this.opts.target, path, hash: cur.seen.hash }, 'watched file changed');
      this.opts.onChange({
        kind: 'file_change',
        target: this.opts.target,
        path,
        time,
        hash: cur.seen.hash,
        diff,
      });
    }
  }

  /** Also registers an env file's secret values with the redactor. Undefined when the read timed out. */
  private async readWithTimeout(path: string): Promise<{ seen: Seen; mtimeMs?: number } | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), READ_TIMEOUT_MS);
    });
    const cur = await Promise.race([this.read(path), timeout]).finally(() => clearTimeout(timer));
    if (cur === undefined) {
      this.opts.logger.warn({ target: this.opts.target, path }, 'watched file read timed out');
      return undefined;
    }
    if (isEnvFile(path) && cur.seen.text !== undefined)
      redactor.setSource(`watch:${path}`, envSecrets(cur.seen.text));
    return cur;
  }

  private async read(path: string): Promise<{ seen: Seen; mtimeMs?: number }> {
    // Only regular files: /dev/zero never ends, and opening a FIFO blocks until a writer comes (`check`
    // refuses both; this guards a path that became one later). O_NONBLOCK keeps open() off a FIFO's wait.
    try {
      const st = await stat(path);
      if (!st.isFile()) return { seen: { hash: `not-a-file:${st.mode}`, error: 'not a regular file' } };
      if (st.size > MAX_WATCHED_BYTES) {
        return {
          seen: {
            hash: `large:${st.size}:${st.mtimeMs}`,
            error: `over ${MAX_WATCHED_BYTES} bytes, not read`,
          },
          mtimeMs: st.mtimeMs,
        };
      }
    } catch {
      return { seen: { hash: null } };
    }
    let fh;
    try {
      fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
      return { seen: { hash: null } };
    }
    try {
      const st = await fh.stat();
      if (!st.isFile()) return { seen: { hash: `not-a-file:${st.mode}`, error: 'not a regular file' } };
      const hash = createHash('sha256');
      const keep: Buffer[] = [];
      let size = 0;
      for await (const chunk of fh.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>) {
        hash.update(chunk);
        size += chunk.length;
        if (size > MAX_WATCHED_BYTES) break;
        if (size <= this.maxDiff) keep.push(chunk);
      }
      const text = size <= this.maxDiff ? Buffer.concat(keep).toString('utf8') : undefined;
      return { seen: { hash: hash.digest('hex'), text }, mtimeMs: st.mtimeMs };
    } catch {
      return { seen: { hash: null } };
    } finally {
      await fh.close();
    }
  }
}
