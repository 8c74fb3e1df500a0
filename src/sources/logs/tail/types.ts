// The types the follower's stages share: what a followed file is fed to, the fs calls they make, the kinds of
// rotation and read error they report (metric labels), and a file opened for following.
import type * as nodeFs from 'node:fs';

/** What the follower feeds: one per opened file (inode). */
export interface FileReader {
  feed(buf: Buffer, n: number): void;
  /** Emit the incomplete last line (the file is being let go). */
  flush(): void;
  /** Quiet for a while: raise multi-line matches waiting for lines that may never come (the line is kept). */
  settle(): void;
  /** The file was truncated in place: start over at offset 0. */
  reset(): void;
  readonly hasPartial: boolean;
  /** Offset a restart resumes at: after the last complete line (held back at a line whose event is not durable yet). */
  readonly committed: number;
  /** Offset just after the last complete line processed (default `committed`): where a copy of the file resumes. */
  readonly consumed?: number;
}

export type RotationKind = 'rename' | 'truncate' | 'recreate';
export type ReadErrorReason = 'missing' | 'permission' | 'unreadable' | 'io';

/** The fs calls the follower makes; tests inject failures through this. */
export type FollowFs = Pick<
  typeof nodeFs,
  'openSync' | 'readSync' | 'fstatSync' | 'statSync' | 'closeSync' | 'readdirSync'
>;

/** A regular file opened for following: its descriptor, what fstat said, and its first bytes (up to FP_BYTES). */
export interface OpenedFile {
  fd: number;
  fst: nodeFs.Stats;
  head: Buffer;
}
