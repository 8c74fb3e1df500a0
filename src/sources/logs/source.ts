// The one shape every log source kind has: the watcher starts and stops it and gives it the same hooks for
// lines, skips, read errors, rotations and poll ticks, whatever it reads (a file, a glob, the journal). A kind
// is one file in sources/ plus one row of LOG_SOURCE_KINDS (sources/index.ts), so the watcher never asks which
// kind it holds.
import type { LogSourceConfig } from '../../config/schema.js';
import type { CursorStore } from '../../lib/state-store.js';
import type { FileReader, FollowFs } from './tail/types.js';
import type { OffsetStore } from './tail/offsets.js';
import type { PollClock } from './tail/poll-clock.js';

/** A running source. halt() (optional) reads to the end before stop(), so a clean stop re-reads nothing. */
export interface LogSource {
  start(): void;
  stop(): void;
  halt?(): void;
}

/** One line of a record source (a journal entry): no byte offset of its own, its time and stream known. */
export interface SourceLine {
  text: Buffer;
  /** Unix ms when the line was written; NaN when unknown (then the read time stands). */
  time: number;
  /** Which stream wrote it (a systemd unit, a container stream); an event field when set. */
  stream?: string;
}

/** What the watcher gives a source: where its lines go and what it reports. Counting is the watcher's. */
export interface LogSourceHooks {
  /** A byte stream with offsets (a file): the reader scans it; `replayEnd` is where re-read bytes end. */
  openReader(file: string, start: number, replayEnd: number): FileReader;
  /** A record stream named `name` (events carry it as `file`); `streamField` names `stream` in event fields. */
  lines(name: string, streamField?: string): (line: SourceLine) => void;
  /** The catch-up limit left `bytes` unread (and `entries` records, for a source that counts records). */
  skipped(where: string, bytes: number, entries?: number): void;
  /** A read error; `reason` is the metric label, each kind names its own (tail/follow.ts, journald.ts). */
  readError(reason: string, where: string, message: string): void;
  rotated(kind: string, where: string): void;
  /** The source polled (a liveness gauge: a follower stuck in a syscall stops ticking). */
  tick(now: number): void;
  /** Saving the source's position failed; reading goes on. */
  saveError(message: string): void;
  /** Data lost under the source (e.g. a file truncated past its offset): a warning, not a counted error. */
  gap(where: string, message: string): void;
}

/** Everything a kind's factory gets: its config entry, the position stores, tuning and the hooks. */
export interface LogSourceContext {
  src: LogSourceConfig;
  offsets: OffsetStore;
  cursors: CursorStore;
  now: () => number;
  follow?: {
    pollMs?: number;
    poll?: PollClock;
    idleFlushMs?: number;
    retireQuietMs?: number;
    saveEveryMs?: number;
    fs?: FollowFs;
    rescanMs?: number;
  };
  journal?: { journalctl?: string; retryMs?: number };
  hooks: LogSourceHooks;
}

/** One row of the kinds table. */
export interface LogSourceKindDef {
  /** The config key whose presence selects this kind (`path`, `journal`); the schema makes them exclusive. */
  key: keyof LogSourceConfig;
  /** Which position store the kind saves into: the watcher loads (and reports) only the stores in use. */
  state: 'log_offsets' | 'journal_cursors';
  create(ctx: LogSourceContext): LogSource;
}

export type LogSourceKinds = Readonly<Record<string, LogSourceKindDef>>;
