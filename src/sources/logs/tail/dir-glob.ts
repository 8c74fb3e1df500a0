// Wildcards in the directory part of a log path (`/var/log/pods/llm_prefill-*/sglang/*.log`): one Follower
// per matching directory, found again every rescan, so a new pod's logs are picked up and a pod that goes
// away is forgotten once its files are drained (Follower.stop reads every open file to its end first:
// the kubelet deletes the directory, but the descriptors we hold still read). The follower itself stays
// a one-directory follower (src/sources/logs/tail/follow.ts); each `*` here matches one path segment.
import * as nodeFs from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { Follower, globToRegExp, type FollowerOptions } from './follow.js';

const GLOB_CHARS = /[*?[]/;

export function hasDirGlob(path: string): boolean {
  return GLOB_CHARS.test(dirname(path));
}

/** Directories matching `pattern` now (each segment with a wildcard matches one directory level). */
export function expandDirs(
  pattern: string,
  fs: Pick<typeof nodeFs, 'readdirSync' | 'statSync'> = nodeFs,
): string[] {
  const segs = pattern.split(sep);
  let dirs = [segs[0] === '' ? sep : segs[0]!];
  for (const seg of segs.slice(1)) {
    if (seg === '') continue;
    const next: string[] = [];
    if (!GLOB_CHARS.test(seg)) {
      for (const d of dirs) next.push(join(d, seg));
    } else {
      const re = globToRegExp(seg);
      for (const d of dirs) {
        let names: nodeFs.Dirent[];
        try {
          names = fs.readdirSync(d, { withFileTypes: true });
        } catch {
          continue;
        }
        for (const n of names) {
          // Hidden entries (`.`-prefixed) match only a pattern that says so, as in a shell.
          if (n.name.startsWith('.') && !seg.startsWith('.')) continue;
          if ((n.isDirectory() || n.isSymbolicLink()) && re.test(n.name)) next.push(join(d, n.name));
        }
      }
    }
    dirs = next;
  }
  return dirs
    .filter((d) => {
      try {
        return fs.statSync(d).isDirectory();
      } catch {
        return false;
      }
    })
    .sort();
}

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
