// One LogWatcher per target: follows each configured log source, runs its rules, keeps the log and
// engine metrics, and hands every match and engine reading to the detector as typed signals.
import type { LogSourceConfig, RuleConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { EngineMetrics, LogMetrics } from '../metrics.js';
import type { EngineSignal, LogEventSignal } from '../signals.js';
import { applyEngineValues } from './engine-lines.js';
import { Follower, type FileReader, type FollowFs, type ReadErrorReason } from './follow.js';
import { OffsetStore } from './offsets.js';
import { compileRuleSet, type RuleSet } from './rules.js';
import { ChunkScanner, type ScanSink } from './scanner.js';

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
  now?: () => number;
  /** Follower tuning, mostly for tests. */
  follow?: { pollMs?: number; idleFlushMs?: number; retireQuietMs?: number; fs?: FollowFs };
}

export class LogWatcher {
  private followers: Follower[] = [];
  private readonly now: () => number;
  private readonly store: OffsetStore;
  private readonly log: Logger;

  constructor(private readonly o: LogWatcherOptions) {
    this.now = o.now ?? Date.now;
    this.store = new OffsetStore(o.stateDir, o.target);
    this.log = o.logger.child({ component: 'logs', target: o.target });
  }

  async start(): Promise<void> {
    const loaded = this.store.load();
    if (loaded.error) this.log.warn(loaded.error);
    for (const src of this.o.sources) {
      const labels = { target: this.o.target, service: src.service };
      const onError = (
        reason: ReadErrorReason | 'binary' | 'line_too_long',
        file: string,
        message: string,
      ) => {
        this.o.metrics.logReadErrors.inc({ ...labels, reason });
        this.log.warn({ service: src.service, file, reason }, `log source: ${message}`);
      };
      let set: RuleSet;
      let follower: Follower;
      try {
        set = compileRuleSet(src.packs, this.o.userRules, src.service);
        follower = new Follower({
          path: src.path,
          from: src.from,
          maxCatchUpBytes: src.maxCatchUpBytes,
          offsets: this.store,
          now: this.now,
          ...this.o.follow,
          openReader: (file, start) => this.reader(src, set, file, start, onError),
          onRotation: (kind, file) => {
            this.o.metrics.logRotations.inc({ ...labels, kind });
            this.log.info({ service: src.service, file, kind }, 'log rotated');
          },
          onError,
          onSkip: (file, bytes) =>
            this.log.warn(
              { service: src.service, file, bytes },
              'catch-up limit: skipped bytes written while down',
            ),
        });
      } catch (err) {
        onError('io', src.path, (err as Error).message);
        continue;
      }
      follower.start();
      this.followers.push(follower);
    }
  }

  async stop(): Promise<void> {
    for (const f of this.followers) f.stop();
    this.followers = [];
  }

  private reader(
    src: LogSourceConfig,
    set: RuleSet,
    file: string,
    start: number,
    onError: (reason: 'binary', file: string, message: string) => void,
  ): FileReader {
    const { metrics, target } = this.o;
    const labels = { target, service: src.service };
    let warnedLong = false;
    const sink: ScanSink = {
      match: (m) => {
        const time = this.now();
        metrics.logEvents.inc({ ...labels, rule: m.rule.name, severity: m.rule.severity });
        metrics.logLastEvent.set({ ...labels, rule: m.rule.name }, time / 1000);
        if (m.values) this.o.onEngine(applyEngineValues(metrics, labels, m.values, time, false));
        this.o.onEvent({
          kind: 'log',
          ...labels,
          rule: m.rule.name,
          severity: m.rule.severity,
          line: m.line,
          file,
          offset: m.offset,
          time,
          fields: m.fields,
        });
      },
      engine: (values) => this.o.onEngine(applyEngineValues(metrics, labels, values, this.now(), true)),
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
    const scanner = new ChunkScanner(set, src.maxLineBytes, sink, start);
    let counted = 0;
    let binary = false;
    const account = () => {
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
        scanner.feed(buf, n);
        account();
      },
      flush: () => {
        scanner.flush();
        account();
      },
      reset: () => scanner.reset(0),
      get hasPartial() {
        return scanner.hasPartial;
      },
      get committed() {
        return scanner.committed;
      },
    };
  }
}
