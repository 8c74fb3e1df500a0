// One feed for every reader of engine logs: the daemon (watcher.ts: files and journal entries) and `replay`
// (commands/replay-files.ts) build a source's pipeline here — the runtime's wrapper (CRI, Docker) unwrapped, or
// picked from the first line (`auto`); the chunk scanner with the source's structured records; the rule matcher
// — and a match becomes the detector's LogEventSignal here, so the daemon and replay cannot tell one line apart
// (a user rule's event ranks below the built-in ones in both, a loop is a loop in both).
import type { LogFormat } from '../../config/schema.js';
import type { LogEventSignal } from '../../core/signals.js';
import type { CarrierCut } from './carriers.js';
import { detectFormat, LINE_FORMATS, structuredOf, wrapperOf } from './formats/index.js';
import type { StructuredFormat, StructuredKeys } from './formats/structured.js';
import { EventFolds } from './fold.js';
import { eventClass, type RuleSet } from './rules/compile.js';
import type { RuleMatch } from './rules/matcher.js';
import { ChunkScanner, type ScanSink } from './scanner.js';
import { AutoFeed, Unwrapper, type LineFeed, type LineMeta } from './unwrap.js';

/** What a source says about its bytes (a log source's config, or replay's options for a file). */
export interface FeedSource {
  maxLineBytes: number;
  format: LogFormat;
  /** The engine's lines inside a wrapper (or the journal) are JSON or logfmt records. */
  structured?: StructuredFormat | 'auto' | undefined;
  keys?: StructuredKeys | undefined;
}

/** Where a feed's matches, engine lines and problems go. */
export interface FeedSink extends Omit<ScanSink, 'match'> {
  /** A rule's event, with what the runtime recorded about its line when the file is wrapped. */
  match(m: RuleMatch, meta: LineMeta | undefined): void;
  /** The matcher's clock: Unix ms of a line at scanner offset `at` (MatcherOptions.timeOf). */
  timeOf?(line: string, at: number): number;
  /** A line not in the wrapper's format, passed on as it is. */
  malformed?(format: 'cri' | 'docker'): void;
  /** A match folded into its burst's event (fold.ts); `n`: how many its burst has folded so far. */
  folded?(m: RuleMatch, n: number): void;
}

export interface FeedOptions {
  /** File offset of the first byte fed. */
  start?: number;
  /** Every periodic engine line, not only the last per rank of each chunk (replay's verdict timeline). */
  everyEngineLine?: boolean;
  /** The source's event bursts (fold.ts), shared by its files; default one for this feed. */
  folds?: EventFolds;
}

export interface LogFeed {
  /** Where the bytes go: the scanner, the unwrapper in front of it, or the auto feed that picks one. */
  readonly input: LineFeed;
  readonly scanner: ChunkScanner;
  /** What the runtime recorded about the line at scanner offset `at` (file offset, time, stream), when wrapped. */
  lookup(at: number): LineMeta | undefined;
  /** The file offset of scanner offset `at`: `at` itself unless wrapped; undefined once the wrapper forgot it. */
  fileOffset(at: number): number | undefined;
}

export function logFeed(set: RuleSet, src: FeedSource, sink: FeedSink, o: FeedOptions = {}): LogFeed {
  const start = o.start ?? 0;
  // Set when the file is wrapped by a container runtime: maps scanner offsets to file offsets and times.
  let unwrapper: Unwrapper | undefined;
  const lookup = (at: number) => unwrapper?.lookup(at);
  const folds = o.folds ?? new EventFolds();
  const match = (m: RuleMatch) => {
    // A user rule's matches are the operator's own count (a marker per line, say): only built-in rules fold.
    const n = m.rule.user
      ? 0
      : folds.admit({ class: eventClass(m), severity: m.severity, loop: m.loop !== undefined }, m.time);
    if (n === 0) sink.match(m, lookup(m.offset));
    else sink.folded?.(m, n);
  };
  const scanner = new ChunkScanner(
    set,
    src.maxLineBytes,
    {
      match,
      ...(sink.member ? { member: (m: RuleMatch) => sink.member!(m) } : {}),
      engine: (line) => sink.engine(line),
      truncated: () => sink.truncated(),
      ...(sink.decodeError ? { decodeError: (f: StructuredFormat) => sink.decodeError!(f) } : {}),
      ...(sink.carrierCut ? { carrierCut: (c: string, cap: CarrierCut) => sink.carrierCut!(c, cap) } : {}),
    },
    start,
    o.everyEngineLine === true,
    sink.timeOf ? { timeOf: (line, at) => sink.timeOf!(line, at) } : {},
    structuredOf(src.format, src.structured, src.keys),
  );
  const unwrapped = (format: 'cri' | 'docker'): LineFeed => {
    // The scanner sees the unwrapped stream, which starts at 0; file offsets are the unwrapper's.
    scanner.reset(0);
    unwrapper = new Unwrapper(
      LINE_FORMATS[format],
      src.maxLineBytes,
      scanner,
      start,
      sink.malformed ? () => sink.malformed!(format) : undefined,
    );
    return unwrapper;
  };
  const wrapper = wrapperOf(src.format);
  const input: LineFeed =
    src.format === 'auto'
      ? new AutoFeed(start, (first) => {
          const f = detectFormat(first);
          return f === 'plain' ? scanner : unwrapped(f);
        })
      : wrapper !== undefined
        ? unwrapped(wrapper)
        : scanner;
  return {
    input,
    scanner,
    lookup,
    fileOffset: (at) => (unwrapper ? unwrapper.lookup(at)?.offset : at),
  };
}

/** Where an event's line is, when, and what the runtime said about it. */
export interface EventPlace {
  target: string;
  service: string;
  file: string;
  /** File offset of the (first) line. */
  offset: number;
  /** Unix ms the detector files the event under. */
  time: number;
  /** The event's identity across restarts (event-ref.ts), when the caller keeps one. */
  ref?: string;
  /** The runtime's stream (stdout, stderr) of the line, added to the fields under `field`. */
  stream?: { field: string; value: string };
}

/** The detector's signal for a rule's event: the rule, its class, whose rule it is, the line and its incident. */
export function logEventSignal(m: RuleMatch, at: EventPlace): LogEventSignal {
  return {
    kind: 'log',
    target: at.target,
    service: at.service,
    rule: m.rule.name,
    class: eventClass(m),
    ...(m.rule.user ? { user: true } : {}),
    severity: m.severity,
    line: m.line,
    file: at.file,
    offset: at.offset,
    time: at.time,
    ...(at.ref !== undefined ? { ref: at.ref } : {}),
    fields: at.stream ? { ...m.fields, [at.stream.field]: at.stream.value } : m.fields,
    ...(m.incident ? { incident: m.incident } : {}),
    ...(m.loop ? { loop: m.loop } : {}),
  };
}
