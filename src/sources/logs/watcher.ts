// One LogWatcher per target: follows each configured log source, runs its rules, keeps the log and
// engine metrics, and hands every match and engine reading to the detector as typed signals.
import type { LogSourceConfig, RuleConfig } from '../../config/schema.js';
import type { Logger } from '../../lib/logger.js';
import type { EngineMetrics, LogMetrics } from '../../metrics.js';
import type { EngineSignal, LogEventSignal, LogMemberMatch } from '../../core/signals.js';
import { applyEngineValues } from './engine-lines.js';
import { applyEngineLine, EngineRanks } from './engine-ranks.js';
import type { FileReader } from './tail/types.js';
import { OffsetStore } from './tail/offsets.js';
import { eventRef, lineTime } from './event-ref.js';
import { CursorStore } from '../../lib/state-store.js';
import type {
  LogSource,
  LogSourceContext,
  LogSourceHooks,
  LogSourceKindDef,
  LogSourceKinds,
  SourceLine,
} from './source.js';
import { LOG_SOURCE_KINDS, logSourceKind } from './sources/index.js';
import { compileRuleSet, eventClass, type RuleSet } from './rules/compile.js';
import { EventFolds, FOLD_WINDOW_MS } from './fold.js';
import { logEventSignal, logFeed, type FeedSink } from './feed.js';
import { MetaRing, type LineMeta } from './unwrap.js';

export interface LogWatcherOptions {
  target: string;
  sources: LogSourceConfig[];
  userRules: RuleConfig[];
  /** Offsets are persisted here (atomic write), keyed by path and inode. */
  stateDir: string;
  metrics: LogMetrics & EngineMetrics;
  logger: Logger;
  /** Every rule match. */
  onEvent: (e: LogEventSignal) => void;
  /** Gauges parsed from Prefill/Decode batch lines, vLLM `Engine 000:` lines and `extract` rules. */
  onEngine: (e: EngineSignal) => void;
  /**
   * `ref` of every log event the journal holds (journaled critical lines): a line read again after a restart
   * (kill -9 since the last offsets save) raises no event that was already journaled.
   */
  journaled?: () => Iterable<string>;
  /** Resolves once every event raised so far is journaled on disk: offsets are saved no further than that. */
  durable?: () => Promise<void>;
  /** A line folded into an incident already raised (incident bundles mark it as a member). */
  onMember?: (e: LogMemberMatch) => void;
  /** How far each file has been read, and when (incident bundles cut their log windows by it). */
  onRead?: (service: string, file: string, offset: number, time: number) => void;
  now?: () => number;
  /** Follower tuning, mostly for tests. */
  follow?: LogSourceContext['follow'];
  /** Journal source tuning, mostly for tests. */
  journal?: LogSourceContext['journal'];
  /** The source kinds a config entry may select; default LOG_SOURCE_KINDS (a test adds its own). */
  kinds?: LogSourceKinds;
}

export class LogWatcher {
  private sources: LogSource[] = [];
  /** Offsets of lines whose event is not durable yet, per open file (see reader()). */
  private readonly holds = new Set<number[]>();
  /** Record sources' idle timers (lineStream), cleared on stop so nothing is raised after it. */
  private readonly idleTimers = new Set<NodeJS.Timeout>();
  private cursors: CursorStore;
  private readonly now: () => number;
  private readonly store: OffsetStore;
  private readonly log: Logger;

  constructor(private readonly o: LogWatcherOptions) {
    this.now = o.now ?? Date.now;
    this.store = new OffsetStore(o.stateDir, o.target);
    this.cursors = new CursorStore(o.stateDir, o.target);
    this.log = o.logger.child({ component: 'logs', target: o.target });
  }

  /** Refs of journaled events not met again yet (each suppresses one re-read line). */
  private journaledRefs = new Set<string>();

  async start(): Promise<void> {
    this.journaledRefs = new Set(this.o.journaled?.() ?? []);
    const kinds: LogSourceKinds = this.o.kinds ?? LOG_SOURCE_KINDS;
    const picked = this.o.sources.map((src) => ({ src, kind: logSourceKind(src, kinds) }));
    // Offsets always (a first start reports a lost file); cursors only when a source saves into them.
    this.loadState('log_offsets', this.store);
    if (picked.some((p) => p.kind !== undefined && kinds[p.kind]!.state === 'journal_cursors'))
      this.loadState('journal_cursors', this.cursors);
    for (const { src, kind } of picked) {
      const name = kind ?? 'unknown';
      const readError = this.readError(src, name);
      try {
        // The schema admits no entry without a kind; a test table may still lack the row a config names.
        if (kind === undefined) throw new Error('no log source kind matches this entry');
        const def = kinds[kind]!;
        const set = compileRuleSet(src.packs, this.o.userRules, src.service);
        const source = def.create({
          src,
          offsets: this.store,
          cursors: this.cursors,
          now: this.now,
          follow: this.o.follow,
          journal: this.o.journal,
          hooks: this.hooks(src, name, set, def.state, readError),
        });
        source.start();
        this.sources.push(source);
      } catch (err) {
        // A bad user rule or a source that cannot start: that source is off, the others read on.
        readError('io', src.path ?? name, (err as Error).message);
      }
    }
  }

  private readError(src: LogSourceConfig, kind: string): LogSourceHooks['readError'] {
    const labels = { target: this.o.target, service: src.service };
    return (reason, where, message) => {
      this.o.metrics.logReadErrors.inc({ ...labels, reason });
      this.log.warn({ service: src.service, source: kind, file: where, reason }, `log source: ${message}`);
    };
  }

  /** The hooks of one source: every kind's lines, skips, errors, rotations and ticks are counted here alike. */
  private hooks(
    src: LogSourceConfig,
    kind: string,
    set: RuleSet,
    state: LogSourceKindDef['state'],
    readError: LogSourceHooks['readError'],
  ): LogSourceHooks {
    const { metrics, target } = this.o;
    const labels = { target, service: src.service };
    return {
      openReader: (file, start, replayEnd) => this.reader(src, set, file, start, replayEnd, readError),
      lines: (name, streamField) => this.lineStream(src, set, name, streamField),
      skipped: (where, bytes, entries) => {
        // Counted, not only logged: lines nobody read are a gap an alert can see.
        metrics.logSkippedBytes.inc(labels, bytes);
        this.log.warn(
          {
            service: src.service,
            source: kind,
            file: where,
            bytes,
            ...(entries === undefined ? {} : { entries }),
          },
          'catch-up limit: skipped bytes written while down',
        );
      },
      readError,
      rotated: (how, file) => {
        metrics.logRotations.inc({ ...labels, kind: how });
        this.log.info({ service: src.service, file, kind: how }, 'log rotated');
      },
      tick: (now) => metrics.logFollowerTick.set(labels, now / 1000),
      saveError: (message) => this.saveError(state, message),
      gap: (file, message) => this.log.warn({ service: src.service, file }, `log source: ${message}`),
    };
  }

  async stop(): Promise<void> {
    // Read to the end, let the journal write the events of what was read, then save: a clean stop (a reload)
    // leaves offsets just after the last line, so the next run reads nothing twice.
    for (const f of this.sources) f.halt?.();
    for (const t of this.idleTimers) clearTimeout(t);
    this.idleTimers.clear();
    if (this.o.durable) {
      // Bounded: a journal stuck on a dead disk must not hold the shutdown (those lines are read again).
      let timer: NodeJS.Timeout | undefined;
      const written = await Promise.race([
        this.o.durable().then(() => true),
        new Promise<false>((r) => (timer = setTimeout(() => r(false), DURABLE_WAIT_MS))),
      ]);
      clearTimeout(timer);
      if (written) for (const h of this.holds) h.length = 0;
    }
    for (const f of this.sources) f.stop();
    this.sources = [];
    this.holds.clear();
    // A background save still in flight lands nothing older than the final one; nothing is left writing.
    await Promise.all([this.store.settled(), this.cursors.settled()]);
  }

  /** A state save failed: its own counter, never a read error of the sources (they read on). */
  /** Loads a store; an unusable state file is an error line and a counted metric, never one quiet warning. */
  private loadState(store: 'log_offsets' | 'journal_cursors', from: OffsetStore | CursorStore): void {
    const loaded = from.load();
    if (loaded.error === undefined) return;
    if (loaded.recovery !== undefined)
      this.o.metrics.stateLoadErrors.inc({ store, recovery: loaded.recovery });
    const consequence =
      loaded.recovery === 'lost'
        ? store === 'log_offsets'
          ? 'log files without a saved offset are read from their start (at most maxCatchUpBytes each), from: end or not'
          : 'journal sources start where a first start would'
        : 'lines since that save are read again';
    this.log.error(
      { store, recovery: loaded.recovery },
      `saved state unusable: ${loaded.error}; ${consequence}`,
    );
  }

  private saveError(store: 'log_offsets' | 'journal_cursors', message: string): void {
    this.o.metrics.stateSaveErrors.inc({ store });
    this.log.warn({ store }, message);
  }

  /**
   * A record source's lines (journal entries): each is one line of one stream fed to a scanner, with its
   * own time and stream kept beside it for the events. No offsets, so nothing is replayed or held.
   */
  private lineStream(
    src: LogSourceConfig,
    set: RuleSet,
    name: string,
    streamField = 'stream',
  ): (line: SourceLine) => void {
    const { metrics, target } = this.o;
    const labels = { target, service: src.service };
    const metas = new MetaRing();
    const sink = this.sink(src, name, (at) => metas.lookup(at), NO_REPLAY, streamField);
    // No wrapper (a journal source's format is plain): the entry's time and stream are kept in `metas`.
    const { scanner } = logFeed(set, src, sink, { folds: this.foldsOf(src) });
    let at = 0;
    let counted = 0;
    let idle: NodeJS.Timeout | undefined;
    return (e) => {
      // Cut to one byte over the limit: the scanner then counts it truncated, and a huge entry is not copied.
      const text = e.text.length > src.maxLineBytes + 1 ? e.text.subarray(0, src.maxLineBytes + 1) : e.text;
      metas.push({ at, offset: at, time: e.time, stream: e.stream ?? '' });
      const line = Buffer.concat([text, NL]);
      scanner.feed(line, line.length);
      at += line.length;
      metas.trim();
      const n = scanner.lines - counted;
      counted = scanner.lines;
      metrics.logLines.inc(labels, n);
      metrics.logLastLine.set(labels, this.now() / 1000);
      // Quiet for a while: raise what waits for lines that may never come (a chain head waiting for its traceback,
      // a record whose header alone is decisive), as the file follower does when a file goes quiet (tail/follow.ts).
      if (idle !== undefined) {
        clearTimeout(idle);
        this.idleTimers.delete(idle);
      }
      const t = setTimeout(() => {
        this.idleTimers.delete(t);
        idle = undefined;
        scanner.settle();
      }, IDLE_SETTLE_MS);
      t.unref();
      this.idleTimers.add((idle = t));
    };
  }

  /** Where a source's rule matches go: metrics, then the detector as events. */
  private sink(
    src: LogSourceConfig,
    file: string,
    lookup: (at: number) => LineMeta | undefined,
    replay: Replay,
    streamField = 'stream',
  ): FeedSink {
    const { metrics, target } = this.o;
    const labels = { target, service: src.service };
    let warnedLong = false;
    const warnedCut = new Set<string>();
    // The last own time of a re-read line: an unstamped one (a stderr traceback) takes it.
    let lastOld = NaN;
    return {
      member: (m) => {
        metrics.logMatches.inc({ ...labels, rule: m.rule.name });
        const of = m.incident?.members[0]?.rule;
        if (of === undefined || this.o.onMember === undefined) return;
        this.o.onMember({
          service: src.service,
          file,
          offset: lookup(m.offset)?.offset ?? m.offset,
          time: m.time,
          rule: m.rule.name,
          severity: m.severity,
          line: m.line,
          memberOf: of,
        });
      },
      decodeError: (format) => metrics.logDecodeErrors.inc({ ...labels, format }),
      timeOf: (line, at) => {
        // The runtime's (or journald's) timestamp is when the engine wrote the line. A line that was in the
        // file before we opened it carries its own time when it has one (a re-read old traceback must not
        // look fresh), or the last one before it; a line read as it is written is stamped now (its own stamp has
        // a second's precision and the engine's clock zone).
        const meta = lookup(at);
        const old = (meta?.offset ?? at) < replay.end;
        const stamped = typeof meta?.time === 'number' ? meta.time : meta?.time ? Date.parse(meta.time) : NaN;
        const now = this.now();
        let own = Number.isFinite(stamped) ? stamped : old ? lineTime(line, now) : NaN;
        if (old && !Number.isFinite(own)) own = lastOld;
        else if (old) lastOld = own;
        return Number.isFinite(own) ? Math.min(own, now) : now;
      },
      match: (m, wrapped) => {
        // A record source's entries are not wrapped: their time and stream are in the source's own ring.
        const meta = wrapped ?? lookup(m.offset);
        const offset = meta?.offset ?? m.offset;
        const old = offset < replay.end;
        // Read again after a restart (offsets are saved every second; a kill -9 loses up to that much): an
        // event already journaled is not raised twice. Each journaled ref stands for one line.
        const ref = eventRef(src.service, offset, m.line);
        if (old && this.journaledRefs.delete(ref)) return;
        const e = logEventSignal(m, {
          ...labels,
          file,
          offset,
          time: m.time,
          ref,
          ...(meta?.stream ? { stream: { field: streamField, value: meta.stream } } : {}),
        });
        const rule = { rule: e.rule, class: e.class };
        metrics.logEvents.inc({ ...labels, ...rule, severity: e.severity });
        metrics.logMatches.inc({ ...labels, rule: e.rule });
        metrics.logLastEvent.set({ ...labels, ...rule }, e.time / 1000);
        if (m.values) this.o.onEngine(applyEngineValues(metrics, labels, m.values, e.time, false));
        this.o.onEvent(e);
        replay.raised(offset);
      },
      engine: (line) => {
        // Undefined for a line whose rank is refused (engine-ranks.ts: counted, no signal).
        const sig = applyEngineLine(metrics, labels, this.ranksOf(src), line, this.now());
        if (sig !== undefined) this.o.onEngine(sig);
      },
      folded: (m, n) => {
        // The burst's event is out already: this one is counted. Logged once per burst, at its first fold.
        const cls = eventClass(m);
        metrics.logEventsFolded.inc({ ...labels, class: cls });
        metrics.logMatches.inc({ ...labels, rule: m.rule.name });
        if (n === 1)
          this.log.warn(
            { service: src.service, file, class: cls, rule: m.rule.name },
            `a burst of ${cls} log events: folded into its first event for ${FOLD_WINDOW_MS / 1000} s (counted in log_events_folded_total)`,
          );
      },
      carrierCut: (carrier, cap) => {
        // Counted each time; logged once per carrier and file (a user can cut one off with every request).
        metrics.logCarriersCut.inc({ ...labels, carrier, cap });
        if (warnedCut.has(carrier)) return;
        warnedCut.add(carrier);
        this.log.warn(
          { service: src.service, file, carrier, cap },
          `a record carrying user text (${carrier}) ran past its ${cap} cap: it ends at the engine's next record, tail or not`,
        );
      },
      truncated: () => {
        metrics.logLinesTruncated.inc(labels);
        metrics.logReadErrors.inc({ ...labels, reason: 'line_too_long' });
        if (!warnedLong) {
          warnedLong = true;
          this.log.warn(
            { service: src.service, file },
            `line longer than ${src.maxLineBytes} bytes, truncated`,
          );
        }
      },
    };
  }

  /** Each source's event bursts (fold.ts), kept across its files (a glob, a rotation) until the watcher stops. */
  private readonly folds = new Map<LogSourceConfig, EventFolds>();

  private foldsOf(src: LogSourceConfig): EventFolds {
    let f = this.folds.get(src);
    if (!f) this.folds.set(src, (f = new EventFolds()));
    return f;
  }

  /** Per-rank engine values of each source, kept across its files (rotation) until the watcher stops. */
  private readonly engineRanks = new Map<LogSourceConfig, EngineRanks>();

  private ranksOf(src: LogSourceConfig): EngineRanks {
    let r = this.engineRanks.get(src);
    if (!r) this.engineRanks.set(src, (r = new EngineRanks()));
    return r;
  }

  private reader(
    src: LogSourceConfig,
    set: RuleSet,
    file: string,
    start: number,
    replayEnd: number,
    onError: (reason: string, file: string, message: string) => void,
  ): FileReader {
    const { metrics, target } = this.o;
    const labels = { target, service: src.service };
    // Offsets of lines whose event is not on disk yet: the saved offset stays before the first of them, so a
    // kill -9 before the journal write reads the line again and raises its event then.
    const inflight: number[] = [];
    this.holds.add(inflight);
    const durable = this.o.durable;
    const replay: Replay = {
      end: replayEnd,
      raised: (offset) => {
        if (!durable) return;
        inflight.push(offset);
        void durable().then(() => {
          const i = inflight.indexOf(offset);
          if (i >= 0) inflight.splice(i, 1);
        });
      },
    };
    let warnedMalformed = false;
    const sink: FeedSink = {
      ...this.sink(src, file, (at) => lookup(at), replay),
      malformed: (format) => {
        metrics.logReadErrors.inc({ ...labels, reason: 'malformed' });
        if (!warnedMalformed) {
          warnedMalformed = true;
          this.log.warn(
            { service: src.service, file, reason: 'malformed' },
            `log source: a line not in the ${format} format (passed on as it is)`,
          );
        }
      },
    };
    const {
      input: feed,
      scanner,
      lookup,
      fileOffset,
    } = logFeed(set, src, sink, {
      start,
      folds: this.foldsOf(src),
    });
    let counted = 0;
    let binary = false;
    this.o.onRead?.(src.service, file, start, this.now());
    const account = () => {
      this.o.onRead?.(src.service, file, scanner.committed, this.now());
      const n = scanner.lines - counted;
      if (n > 0) {
        counted = scanner.lines;
        metrics.logLines.inc(labels, n);
        metrics.logLastLine.set(labels, this.now() / 1000);
      }
    };
    return {
      feed: (buf, n) => {
        if (!binary) {
          const z = buf.indexOf(0);
          if (z >= 0 && z < n) {
            binary = true;
            onError('binary', file, 'NUL bytes: binary data in a log file');
          }
        }
        feed.feed(buf, n);
        account();
      },
      flush: () => {
        feed.flush();
        account();
      },
      settle: () => {
        feed.settle();
        account();
      },
      reset: () => {
        inflight.length = 0;
        replay.end = 0;
        feed.reset(0);
      },
      get hasPartial() {
        return feed.hasPartial;
      },
      get committed() {
        // Not past a line whose event is not on disk yet (inflight) nor one whose event is not raised yet: a
        // chain head waiting for its traceback, an open record (a kill -9 would lose both; a restart reads
        // them again from here). A held line is usually a record's window (200 lines) plus the chain head's
        // wait (ROOT_CAUSE_WAIT_LINES) back at most, inside the unwrapper's line metadata (MetaRing, 4,096 lines);
        // user text inside a record does not count against the window, so a CRI or Docker line can fall out of
        // the ring, and then the hold is not applied (the position moves on, as it did before holds existed).
        let c = inflight.length > 0 ? Math.min(feed.committed, ...inflight) : feed.committed;
        const held = scanner.heldFrom;
        if (held !== undefined) {
          const at = fileOffset(held);
          if (at !== undefined && at < c) c = at;
        }
        return c;
      },
      get consumed() {
        return feed.committed;
      },
    };
  }
}

const NL = Buffer.from('\n');

/** How long a stop waits for the journal to write the last events before saving offsets short of them. */
const DURABLE_WAIT_MS = 1000;
/** A record source quiet this long settles its scanner (the file follower's idleFlushMs default). */
const IDLE_SETTLE_MS = 1000;

/** Where re-read lines end (offsets below `end` were in the file when it was opened) and the event hook. */
interface Replay {
  end: number;
  raised(offset: number): void;
}

const NO_REPLAY: Replay = { end: 0, raised: () => {} };
