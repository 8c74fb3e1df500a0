// Which files a log path names: one file, a glob in the file name (`/var/log/sglang/*.log`, one Follower), or
// wildcards in the directory part too (`/var/log/pods/llm_prefill-*/sglang/*.log`, one Follower per directory:
// dir-glob.ts). Each `*` matches within one path segment, as in a shell.
import * as nodeFs from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';

const GLOB_CHARS = /[*?[]/;

export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (const c of glob) {
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

export function hasDirGlob(path: string): boolean {
  return GLOB_CHARS.test(dirname(path));
}

/** What listing a glob's directory found wrong (reported once per streak by the follower). */
export interface ListProblem {
  reason: 'missing' | 'io';
  message: string;
}

/** The files of one directory a path names: the path itself, or the names its file-name glob matches. */
export class FileSet {
  readonly dir: string;
  /** The file name's glob; null for a plain path. */
  readonly glob: RegExp | null;

  constructor(readonly path: string) {
    this.dir = dirname(path);
    if (GLOB_CHARS.test(this.dir)) {
      throw new Error(`log path ${path}: only the file name may contain wildcards`);
    }
    this.glob = GLOB_CHARS.test(basename(path)) ? globToRegExp(basename(path)) : null;
  }

  /** Whether `path` is one this set names (the path, or a name its glob matches, in its directory). */
  owns(path: string): boolean {
    if (dirname(path) !== this.dir) return false;
    return this.glob === null ? path === this.path : this.glob.test(basename(path));
  }

  /**
   * The paths to look at this poll: `held` (files we hold stay checked even when they no longer match, so their
   * rotation is noticed), then the path, or the glob's matches with `saved` paths first (at start, the original
   * is open before its copies are looked at). `problem` is set for a glob whose directory lists nothing that
   * matches or cannot be listed, and null for one that matched; a plain path has neither.
   */
  list(
    fs: Pick<typeof nodeFs, 'readdirSync'>,
    held: Iterable<string>,
    saved: readonly string[],
  ): { paths: string[]; problem?: ListProblem | null } {
    const out = new Set(held);
    if (this.glob === null) {
      out.add(this.path);
      return { paths: [...out] };
    }
    let problem: ListProblem | null;
    try {
      const names = new Set(fs.readdirSync(this.dir));
      for (const p of saved) if (this.owns(p) && names.has(basename(p))) out.add(p);
      for (const name of names) if (this.glob.test(name)) out.add(join(this.dir, name));
      problem = out.size > 0 ? null : { reason: 'missing', message: 'no file matches' };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      problem = { reason: code === 'ENOENT' ? 'missing' : 'io', message: `directory: ${String(code)}` };
    }
    return { paths: [...out], problem };
  }
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
