// Wildcards in the directory part of a log path (`/var/log/pods/llm_prefill-*/sglang/*.log`): one Follower
// per matching directory, found again every rescan, so a new pod's logs are picked up and a pod that goes
// away is forgotten once its files are drained (Follower.stop reads every open file to its end first:
// the kubelet deletes the directory, but the descriptors we hold still read). The follower itself stays
// a one-directory follower (src/sources/logs/tail/follow.ts); each `*` here matches one path segment.
import * as nodeFs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Follower, type FollowerOptions } from './follow.js';
import { expandDirs } from './resolve.js';

export interface DirGlobOptions extends FollowerOptions {
  /** How often the directory pattern is expanded again. */
  rescanMs?: number;
}

export class DirGlobFollower {
  private readonly followers = new Map<string, Follower>();
  private timer?: NodeJS.Timeout;
  private started = false;
  private stopped = false;
  private warned = false;

  constructor(private readonly o: DirGlobOptions) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.rescan(true);
    this.timer = setInterval(() => this.rescan(false), this.o.rescanMs ?? 2000);
    this.timer.unref();
  }

  /** Stops rescanning and every follower reads what is left; stop() saves and closes. */
  halt(): void {
    this.stopped = true;
    clearInterval(this.timer);
    for (const f of this.followers.values()) f.halt();
  }

  stop(): void {
    this.halt();
    for (const f of this.followers.values()) f.stop();
    this.followers.clear();
  }

  /** Files currently followed, across every matching directory. */
  files(): string[] {
    return [...this.followers.values()].flatMap((f) => f.files());
  }

  /** Directories currently followed. */
  dirs(): string[] {
    return [...this.followers.keys()];
  }

  private rescan(initial: boolean): void {
    if (this.stopped) return;
    const dirs = new Set(expandDirs(dirname(this.o.path), this.o.fs ?? nodeFs));
    if (dirs.size === 0 && !this.warned) {
      this.warned = true;
      this.o.onError?.('missing', this.o.path, 'no directory matches');
    } else if (dirs.size > 0) this.warned = false;
    for (const [dir, f] of this.followers) {
      if (!dirs.has(dir)) {
        f.stop();
        this.followers.delete(dir);
      }
    }
    for (const dir of dirs) {
      if (this.followers.has(dir)) continue;
      const f = new Follower({
        ...this.o,
        path: join(dir, basename(this.o.path)),
        // A directory that appears after start is a new pod: all of its log is news.
        from: initial ? this.o.from : 'start',
      });
      this.followers.set(dir, f);
      f.start();
    }
  }
}
