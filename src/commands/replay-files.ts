// Rules over captured log files, once, in process: the engine of `wedgewatch replay` and bench/ingest.
// Same scanner, rules and metrics as the live watcher, so "would this have caught last night?" has the
// answer the daemon would have given.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import client from 'prom-client';
import type { DetectConfig, LogFormat, LogPack, RuleConfig } from '../config/schema.js';
import { createEngineMetrics, createLogMetrics } from '../metrics.js';
import type { EngineSignal, Severity } from '../core/signals.js';
import {
  addTotals,
  applyEngineValues,
  LINE_STAMP,
  stampMs,
  type EngineValues,
} from '../sources/logs/engine-lines.js';
import { EngineRanks, engineSignal, writeEngineGauges } from '../sources/logs/engine-ranks.js';
import { replayTimeline, type Timeline, type TimedSignal } from './replay-timeline.js';
import { compileRuleSet } from '../sources/logs/rules/compile.js';
import type { Incident } from '../sources/logs/rules/incidents.js';
import { logEventSignal, logFeed } from '../sources/logs/feed.js';
import type { StructuredFormat, StructuredKeys } from '../sources/logs/formats/structured.js';
import type { LineMeta } from '../sources/logs/unwrap.js';

export interface ReplayEvent {
  file: string;
  service: string;
  offset: number;
  /** 1-based line number of the (first) line in its file. */
  lineNo: number;
  rule: string;
  severity: Severity;
  /** The rule's class (`thread_death`, `abort`, …; `custom` for user rules). */
  class: string;
  line: string;
  fields: Record<string, string>;
  /** The line's own timestamp text (`2026-07-10 12:00:01`), inherited from the previous line that had one. */
  stamp: string;
  /** Unix ms of `stamp` (NaN when the file had no timestamp before this line). */
  time: number;
  /** The incident the event stands for: its members, absorbed count and root cause (complete after the replay). */
  incident?: Incident;
  /** The event is a loop: one request's line repeated past the loop limit. */
  loop?: { count: number; seconds: number };
}

export interface ReplayOptions {
  files: string[];
  packs: readonly LogPack[];
  userRules?: readonly RuleConfig[];
  /** Service label; default the file name without its extension. */
  service?: string;
  /** Service label per file (same order as `files`), e.g. from an incident bundle's manifest. */
  services?: (string | undefined)[];
  maxLineBytes?: number;
  /** How the files wrap their lines (a captured pod log is `cri`); default plain. */
  format?: LogFormat;
  /** The engine's lines inside the wrapper are JSON or logfmt records. */
  structured?: StructuredFormat | 'auto';
  /** Per file (same order as `files`): a config's log source for it (`replay --config`), overriding the above. */
  settings?: (ReplayFileSettings | undefined)[];

  /** Events kept for the timeline (the rest are counted in the metrics only). */
  maxEvents?: number;
  onProgress?: (p: { file: string; bytes: number; size: number; lines: number }) => void;
  progressEveryBytes?: number;
  /**
   * Also run the detector over the logs' own timestamps and return its verdict timeline. Parses every
   * periodic engine line (not only the last of each chunk), so it costs more on batch-line-heavy logs.
   */
  timeline?: boolean;
  /** Detection settings for the timeline (defaults: the daemon's). */
  detect?: Partial<DetectConfig>;
}

/** What a config's log source says about reading one file. */
export interface ReplayFileSettings {
  packs: readonly LogPack[];
  format: LogFormat;
  structured?: StructuredFormat | 'auto';
  keys?: StructuredKeys;
}

export interface ReplayResult {
  events: ReplayEvent[];
  droppedEvents: number;
  lines: number;
  bytes: number;
  registry: client.Registry;
  /** The detector's verdict timeline (with `timeline: true`). */
  timeline?: Timeline;
  /** The signals the timeline ran on, in file order (with `timeline: true`): the daemon's, on the log's clock. */
  signals?: TimedSignal[];
}

/** Totals of an engine signal not yet known (see the engine sink's settle). */
const NO_TOTALS: EngineValues = Object.freeze({});

/**
 * Bytes fed to the scanner at a time. The scanner's work depends on where its feeds end (a line across two feeds is
 * read whole, on its own; batch lines are thinned per feed), so this stays what replay has always fed: its answer
 * on a file must not change.
 */
const FEED_BYTES = 1 << 16;
/** Bytes read at a time, fed FEED_BYTES at a time: one read call per 16 feeds instead of one per feed. */
const READ_BYTES = 16 * FEED_BYTES;

/** Engine signals that all report progress are merged over at most this span (see the engine sink). */
const PROGRESS_MERGE_MS = 5_000;

export function replayFiles(o: ReplayOptions): ReplayResult {
  const registry = new client.Registry();
  const metrics = { ...createLogMetrics(registry), ...createEngineMetrics(registry) };
  const maxLine = o.maxLineBytes ?? 65_536;
  const maxEvents = o.maxEvents ?? 100_000;
  const events: ReplayEvent[] = [];
  let dropped = 0;
  let lines = 0;
  let bytes = 0;
  const buf = Buffer.allocUnsafe(READ_BYTES);
  const signals: TimedSignal[] = [];
  let mergeStart = 0;
  let endAt: number | undefined;
  const clock: number[] = [];
  let year = 1970;
  // The last full stamp (`YYYY-MM-DD HH:MM:SS`) read, its year and its time: a log has tens of lines per second, all
  // with the same stamp. A full stamp's time depends on nothing else, and reading it sets `year` to its own.
  let knownStamp: string | undefined;
  let knownYear = 0;
  let knownTime = NaN;
  const timeOf = (stamp: string | undefined, fallback: number): number => {
    if (stamp === undefined) return fallback;
    if (stamp === knownStamp) {
      year = knownYear;
      return knownTime;
    }
    const y = /^(\d{4})-/.exec(stamp);
    if (y) year = Number(y[1]);
    const t = stampMs(stamp, year);
    if (y && Number.isFinite(t)) {
      knownStamp = stamp;
      knownYear = year;
      knownTime = t;
    }
    return Number.isFinite(t) ? t : fallback;
  };
  for (const [fileIndex, file] of o.files.entries()) {
    const service = o.service ?? o.services?.[fileIndex] ?? basename(file).replace(/\.[^.]*$/, '');
    const labels = { target: 'replay', service };
    const settings = o.settings?.[fileIndex];
    const set = compileRuleSet(settings?.packs ?? o.packs, o.userRules ?? [], service);
    const ranks = new EngineRanks();
    const matches = new Map<string, number>();
    let lastBatchMs: number | undefined;
    // The last engine signal, still without its totals (a later line of its second or run may replace it).
    let unsettled: EngineSignal | undefined;
    const settle = () => {
      if (unsettled !== undefined) addTotals(unsettled, ranks.total);
      unsettled = undefined;
    };
    const fd = openSync(file, 'r');
    // vLLM stamps have no year: the file's own year stands in for it.
    year = new Date(fstatSync(fd).mtimeMs).getUTCFullYear();
    let lastStamp = '';
    let lastTime = NaN;
    // Set for a wrapped file (logFeed): the runtime's time is the line's stamp, and offsets are file offsets.
    let lookup: (at: number) => LineMeta | undefined = () => undefined;
    const format = settings?.format ?? o.format ?? 'plain';
    // A line without a time of its own (a stderr traceback) has the time of the last line before it that had one:
    // looked up in the file, since the scanner skipped the lines in between. A wrapped file's runtime time stamp is
    // the line's own. The matcher asks for a line's time (incident windows) before the event is built: one answer
    // is kept per offset so both read the same.
    let askedAt = -1;
    let askedStamp: string | undefined;
    const stampFor = (line: string, offset: number): string | undefined => {
      if (offset === askedAt) return askedStamp;
      const meta = lookup(offset);
      const fileOffset = meta?.offset ?? offset;
      askedAt = offset;
      askedStamp =
        (typeof meta?.time === 'string' && meta.time !== '' ? meta.time : undefined) ??
        LINE_STAMP.exec(line.slice(0, 160))?.[0] ??
        // Read back in the file (the scanner skipped the lines between): the incident windows need the time of an
        // unstamped line (a stderr traceback) even without the timeline; the last stamp replay saw may be an hour old.
        stampBefore(fd, fileOffset);
      return askedStamp;
    };
    const feed = logFeed(
      set,
      {
        maxLineBytes: maxLine,
        format,
        structured: settings ? settings.structured : o.structured,
        keys: settings?.keys,
      },
      {
        match: (m, meta) => {
          const fileOffset = meta?.offset ?? m.offset;
          const own = stampFor(m.line, m.offset);
          if (own !== undefined) {
            lastStamp = own;
            lastTime = timeOf(own, lastTime);
          }
          // The daemon's signal (user rules and loops included), timed by the log's own stamps.
          const e = logEventSignal(m, {
            ...labels,
            file,
            offset: fileOffset,
            time: lastTime,
            ...(meta?.stream ? { stream: { field: 'stream', value: meta.stream } } : {}),
          });
          const cls = e.class;
          metrics.logEvents.inc({
            ...labels,
            rule: m.rule.name,
            class: cls,
            severity: m.severity,
          });
          matches.set(m.rule.name, (matches.get(m.rule.name) ?? 0) + 1);
          if (m.values) applyEngineValues(metrics, labels, m.values, Date.now(), false);
          if (o.timeline && Number.isFinite(lastTime)) signals.push(e);
          if (events.length >= maxEvents) {
            dropped++;
            return;
          }
          events.push({
            file,
            service,
            offset: fileOffset,
            lineNo: meta?.line ?? m.lineNo,
            rule: m.rule.name,
            severity: m.severity,
            class: cls,
            line: m.line,
            fields: m.fields,
            ...(m.incident ? { incident: m.incident } : {}),
            ...(m.loop ? { loop: m.loop } : {}),
            // A copy: the stamp may be a slice of a 64 KiB feed's text (an engine line's), and an event holding the
            // slice held that whole text for the rest of the replay.
            stamp: Buffer.from(lastStamp, 'utf16le').toString('utf16le'),
            time: lastTime,
          });
        },
        engine: (line) => {
          if (line.stamp !== undefined) {
            lastStamp = line.stamp;
            lastTime = timeOf(line.stamp, lastTime);
          }
          const at = Number.isFinite(lastTime) ? lastTime : 0;
          if (!(o.timeline && Number.isFinite(lastTime))) {
            // Gauges are written once, after the file (writeEngineGauges): nothing reads them before.
            if (ranks.record(line, at)) lastBatchMs = at;
            return;
          }
          // A rank past the bound (engine-ranks.ts): no signal, counted when the gauges are written. Recorded below,
          // after the previous signal's totals are settled.
          if (!ranks.admits(line.rank)) return;
          lastBatchMs = at;
          const prev = signals.at(-1);
          if (prev !== undefined && prev === unsettled && prev.time === lastTime) {
            // A line of the second the last signal stands for: what the branch below gives when it replaces
            // that signal by this line's (same time and labels, progress of either, per-rank evidence of both),
            // made in place: most engine lines take this path (a second holds a line per rank), and a signal built
            // per line only to be thrown away was garbage to collect. Only the unsettled signal is changed so: a
            // settled one (an earlier file's, same service) has its totals and must be replaced.
            prev.progress = line.progress || prev.progress === true;
            if (line.periodic === true) {
              prev.ranks = {
                ...prev.ranks,
                [line.rank]: { running: line.values.running, progress: line.progress },
              };
            }
            ranks.record(line, at);
            return;
          }
          // The signal's totals are filled in once no later line can replace it (settle): most are replaced.
          const sig = engineSignal(labels, NO_TOTALS, line, lastTime);
          // Engine lines in a row that the detector cannot tell apart become one signal (each reduce
          // copies the detector state; a busy log has lines every second for hours): lines with the same
          // stamp (one-second resolution; the last one's totals cover every rank), and lines that all report
          // progress within PROGRESS_MERGE_MS (the last one sets the progress clock exactly as the run would;
          // only the gauges in between, which no verdict reads while work is progressing, are skipped).
          const sameRun = prev?.kind === 'engine' && prev.service === sig.service;
          // Per-rank evidence of the merged lines is kept: a rank's stall must survive its siblings' lines.
          if (sameRun && prev.ranks !== undefined) sig.ranks = { ...prev.ranks, ...sig.ranks };
          if (sameRun && prev.time === sig.time) {
            sig.progress = sig.progress === true || prev.progress === true;
            signals[signals.length - 1] = sig;
          } else if (
            sameRun &&
            prev.progress === true &&
            sig.progress === true &&
            sig.time - mergeStart < PROGRESS_MERGE_MS
          ) {
            signals[signals.length - 1] = sig;
          } else {
            // The previous signal is final: its totals are those after its own last line, before this one's.
            settle();
            mergeStart = sig.time;
            signals.push(sig);
          }
          ranks.record(line, at);
          unsettled = sig;
        },
        // Counted in a map, the counter set once per file: a label lookup per copy of a per-rank line was a cost.
        member: (m) => matches.set(m.rule.name, (matches.get(m.rule.name) ?? 0) + 1),
        truncated: () => metrics.logLinesTruncated.inc(labels),
        decodeError: (f) => metrics.logDecodeErrors.inc({ ...labels, format: f }),
        // The incident windows run on the log's own time, as the events do.
        timeOf: (line, offset) => {
          const stamp = stampFor(line, offset);
          const t = stamp === undefined ? NaN : timeOf(stamp, lastTime);
          return Number.isFinite(t) ? t : Number.isFinite(lastTime) ? lastTime : 0;
        },
      },
      { everyEngineLine: o.timeline === true },
    );
    lookup = feed.lookup;
    const { scanner } = feed;
    try {
      const size = fstatSync(fd).size;
      let pos = 0;
      let nextReport = o.progressEveryBytes ?? 64 << 20;
      for (;;) {
        const got = readSync(fd, buf, 0, buf.length, pos);
        if (got <= 0) break;
        for (let at = 0; at < got; at += FEED_BYTES) {
          const n = Math.min(FEED_BYTES, got - at);
          feed.input.feed(buf.subarray(at, at + n), n);
          pos += n;
          if (o.timeline) {
            // The block's last stamped line moves the timeline's clock (a quiet engine among other lines stalls).
            const stamp = lastStampIn(buf, at, at + n);
            const t = stamp === undefined ? NaN : timeOf(stamp, lastTime);
            if (Number.isFinite(t)) clock.push(t);
          }
          if (o.onProgress && pos >= nextReport) {
            nextReport += o.progressEveryBytes ?? 64 << 20;
            o.onProgress({ file, bytes: pos, size, lines: scanner.lines });
          }
        }
      }
      feed.input.flush();
      bytes += pos;
    } finally {
      closeSync(fd);
    }
    settle();
    if (o.timeline) {
      // The file's last stamped line: the timeline's clock runs to it even when no signal came from it.
      const fd2 = openSync(file, 'r');
      try {
        const last = stampBefore(fd2, fstatSync(fd2).size);
        const t = last === undefined ? NaN : timeOf(last, lastTime);
        if (Number.isFinite(t)) endAt = Math.max(endAt ?? t, t);
      } finally {
        closeSync(fd2);
      }
    }
    for (const [rule, n] of matches) metrics.logMatches.inc({ ...labels, rule }, n);
    if (lastBatchMs !== undefined) writeEngineGauges(metrics, labels, ranks, lastBatchMs);
    lines += scanner.lines;
    metrics.logLines.inc(labels, scanner.lines);
  }
  if (o.files.length > 1) {
    // One timeline across files: by the lines' own timestamps (stable, so file order breaks ties).
    events.sort((a, b) => (a.stamp < b.stamp ? -1 : a.stamp > b.stamp ? 1 : 0));
  }
  const out: ReplayResult = { events, droppedEvents: dropped, lines, bytes, registry };
  if (o.timeline) {
    out.timeline = replayTimeline(signals, o.detect, endAt, clock);
    out.signals = signals;
  }
  return out;
}

/** Window stampBefore searches first: a traceback is a few KiB, so the stamped line before it is nearly always here. */
const NEAR_STAMP_BYTES = 4 * 1024;
/** The window the answer is defined on. */
const STAMP_WINDOW_BYTES = 64 * 1024;

/**
 * The timestamp of the last stamped line within 64 KiB before `offset`, if any. The last 4 KiB are read first: its
 * whole lines (all but the first, cut by the window, unless the window starts the file) are the 64 KiB window's
 * last lines, decoded alike (UTF-8 resynchronises at a newline), so a stamp found there is the one the 64 KiB
 * search finds; only when none is there is the 64 KiB window read. Reading and decoding 64 KiB per matched line
 * was a tenth of replay on a log with a thousand tracebacks.
 */
function stampBefore(fd: number, offset: number): string | undefined {
  for (const span of [NEAR_STAMP_BYTES, STAMP_WINDOW_BYTES]) {
    const n = Math.min(offset, span);
    if (n === 0) return undefined;
    const b = Buffer.allocUnsafe(n);
    const got = readSync(fd, b, 0, n, offset - n);
    const whole = n === offset || span === STAMP_WINDOW_BYTES;
    // Line by line from the end, each decoded on its own and only its head (the window's text split on '\n' has
    // the same lines: UTF-8 never holds a newline byte inside a character). Most stamps are a line or two back:
    // decoding and splitting the whole window per matched line was most of this function's cost.
    let end = got;
    for (;;) {
      const nl = end > 0 ? b.lastIndexOf(10, end - 1) : -1;
      const start = nl + 1;
      if (nl < 0 && !whole) break; // the window's first line may be cut
      // 160 characters are within the first 640 bytes (at most 4 bytes each; an invalid byte is one character).
      const head = b.toString('utf8', start, Math.min(end, start + 4 * 160)).slice(0, 160);
      const m = LINE_STAMP.exec(head);
      if (m) return m[0];
      if (nl < 0) break;
      end = nl;
    }
    if (whole) return undefined;
  }
  return undefined;
}

/** The stamp of the last stamped line among the last few whole lines of buf[from, to), if any. */
function lastStampIn(buf: Buffer, from: number, to: number): string | undefined {
  let end = buf.lastIndexOf(10, to - 1);
  for (let k = 0; k < 16 && end > from; k++) {
    const start = Math.max(from, buf.lastIndexOf(10, end - 1) + 1);
    const m = LINE_STAMP.exec(buf.toString('latin1', start, Math.min(end, start + 160)));
    if (m) return m[0];
    end = start - 1;
  }
  return undefined;
}

/** Final metric values as Prometheus text, only series that have a value (mtail --one_shot style). */
export async function formatMetrics(registry: client.Registry): Promise<string> {
  const out: string[] = [];
  for (const m of await registry.getMetricsAsJSON()) {
    for (const v of m.values) {
      const labels = Object.entries(v.labels)
        .map(([k, val]) => `${k}=${JSON.stringify(String(val))}`)
        .join(',');
      out.push(`${m.name}${labels ? `{${labels}}` : ''} ${v.value}`);
    }
  }
  return out.join('\n');
}
