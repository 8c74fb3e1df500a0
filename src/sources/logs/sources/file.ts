// The file source kind: a `path`, one file (Follower) or a directory glob (DirGlobFollower), each followed
// across rotation with its offset saved. Only maps the followers' callbacks to the watcher's hooks.
import { DirGlobFollower } from '../tail/dir-glob.js';
import { hasDirGlob } from '../tail/resolve.js';
import { Follower } from '../tail/follow.js';
import type { LogSource, LogSourceContext, LogSourceKindDef } from '../source.js';

export function fileSource({ src, offsets, now, follow, hooks }: LogSourceContext): LogSource {
  // The schema makes `path` present whenever this kind is selected (by its key).
  const path = src.path!;
  return new (hasDirGlob(path) ? DirGlobFollower : Follower)({
    path,
    from: src.from,
    maxCatchUpBytes: src.maxCatchUpBytes,
    offsets,
    now,
    ...follow,
    openReader: (file, start, replayEnd) => hooks.openReader(file, start, replayEnd),
    onRotation: (kind, file) => hooks.rotated(kind, file),
    onError: (reason, file, message) => hooks.readError(reason, file, message),
    onSaveError: (message) => hooks.saveError(message),
    onGap: (file, message) => hooks.gap(file, message),
    onTick: (t) => hooks.tick(t),
    onSkip: (file, bytes) => hooks.skipped(file, bytes),
  });
}

export const FILE_SOURCE = {
  key: 'path',
  state: 'log_offsets',
  create: fileSource,
} as const satisfies LogSourceKindDef;
