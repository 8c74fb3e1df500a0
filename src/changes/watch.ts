// Watched files per target (serve scripts, unit files, env files): polls them, and on every change
// reports the new sha256, the time and a bounded unified diff. Polling (not fs.watch) because editors
// replace files by rename and config management rewrites them in place; both look the same to a hash.
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { Logger } from '../logger.js';
import type { TargetMetrics } from '../metrics.js';
import type { FileChangeSignal } from '../signals.js';
import { unifiedDiff } from './diff.js';

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
      const cur = await this.read(path);
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
      const cur = await this.read(path);
      if (cur.seen.hash === prev.hash) continue;
      const time = this.now();
      cur.seen.changedAt = time;
      this.seen.set(path, cur.seen);
      let diff: string;
      if (prev.text !== undefined && cur.seen.text !== undefined)
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

  private async read(path: string): Promise<{ seen: Seen; mtimeMs?: number }> {
    let fh;
    try {
      fh = await open(path, 'r');
    } catch {
      return { seen: { hash: null } };
    }
    try {
      const st = await fh.stat();
      const hash = createHash('sha256');
      const keep: Buffer[] = [];
      let size = 0;
      for await (const chunk of fh.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>) {
        hash.update(chunk);
        size += chunk.length;
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
