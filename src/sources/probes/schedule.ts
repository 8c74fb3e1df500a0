// Runs a target's probes on their schedules: `every` (with jitter) or node-cron `cron` (seconds allowed). One
// slot per (probe, hop, connection kind); at most one run in flight per slot, because a probe that piles up
// requests on a wedged engine can make things worse (docs/design.md#principles, 3). A tick that finds its
// slot busy counts `skipped_overlap`, and the busy slot's age is exported at scrape time. Jitter (a fraction
// of `every`) delays each slot's run within the interval; cron runs fire on the second they name, unjittered.
import { setMaxListeners } from 'node:events';
import cron, { type ScheduledTask } from 'node-cron';
import type { ProbeConfig, TargetConfig } from '../../config/schema.js';
import type { Logger } from '../../lib/logger.js';
import type { ProbeMetrics } from '../../metrics.js';
import type { ConnKind, InflightRun, ProbeKind, ProbeResultSignal } from '../../core/signals.js';
import { hangs as hangingKind, isCompletion } from '../../core/vocabulary.js';
import { addCollectHook } from './collect-hooks.js';
import { EndpointDispatchers, tlsOptions } from './http.js';
import { PROBES } from './registry.js';
import { Ring } from './ring.js';
import { recordResult, runProbe } from './runner.js';
import { Progress } from './types.js';

export const HISTORY_LIMIT = 100;

export interface ProbeSchedulerOptions {
  target: TargetConfig;
  /** Resolved headers per endpoint name (LoadedConfig.headers.get(target)), secrets included. */
  headers: Map<string, Record<string, string>>;
  metrics: ProbeMetrics;
  logger: Logger;
  onResult: (r: ProbeResultSignal) => void;
  /** Injectable wall clock (Unix ms): result timestamps, in-flight ages, the heartbeat's timestamp. */
  now?: () => number;
  /**
   * Injectable monotonic clock (ms from any origin; default performance.now): what rounds are planned on, so a
   * wall-clock step either way (NTP, a VM resumed, an operator's `date -s`) changes no cadence.
   */
  monoNow?: () => number;
  /** Directory that relative TLS caFile paths are resolved against (the config file's). */
  baseDir?: string;
}

export interface ProbeFilter {
  probe?: string;
  kinds?: ProbeKind[];
  endpoint?: string;
  conn?: ConnKind;
}

interface Slot {
  probe: ProbeConfig;
  hop: EndpointDispatchers;
  conn: ConnKind;
  labels: { target: string; probe: string; endpoint: string; conn: ConnKind; kind: ProbeKind };
  /** startedAt: wall clock at launch (for the record); startedMono: what its age is measured on. */
  inflight?: {
    startedAt: number;
    startedMono: number;
    done: Promise<ProbeResultSignal | undefined>;
    progress: Progress;
  };
  lastResult?: string;
  /** The next early rerun's delay after a failure (ms), doubled each time; undefined while the slot passes. */
  retryMs?: number;
  /** Refused connections in a row (connect_error), for the quick recheck that confirms down. */
  refused: number;
}

/** The first early rerun of a failed slot on a slow schedule comes this soon at the least (ms). */
const RETRY_MIN_MS = 15_000;
/**
 * A refused connection is rechecked this soon (ms) until detect.downAfter refusals in a row say down. Nothing
 * listening is the cheapest failure there is to check (one SYN answered by a RST), and the one whose next check
 * decides `down`: at /health every 10 s × downAfter 2, a kill -9 read down 11–22 s later on the real llama.cpp
 * server, the later figures when the first refusal came just after a round (issue 38 asks 15 s).
 */
export const REFUSED_RECHECK_MS = 3_000;

/** The (hop, conn) pairs a probe runs on. */
export function probeConns(probe: ProbeConfig): ConnKind[] {
  return probe.conn ?? PROBES[probe.kind].defaultConn;
}

/** Every slot a target's probes run on: each probe on each of its hops (default all) over each of its conns. */
export function slotSpecs(
  target: TargetConfig,
): Array<{ probe: ProbeConfig; endpoint: string; conn: ConnKind }> {
  return target.probes.flatMap((probe) =>
    (probe.endpoints ?? target.endpoints.map((e) => e.name)).flatMap((endpoint) =>
      probeConns(probe).map((conn) => ({ probe, endpoint, conn })),
    ),
  );
}

export class ProbeScheduler {
  private readonly now: () => number;
  private readonly monoNow: () => number;
  private readonly hops = new Map<string, EndpointDispatchers>();
  private readonly slots: Slot[] = [];
  private readonly results = new Ring<ProbeResultSignal>(HISTORY_LIMIT);
  private readonly failures = new Ring<ProbeResultSignal>(HISTORY_LIMIT);
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly cronTasks: ScheduledTask[] = [];
  private readonly stopping = new AbortController();
  /** stop() was called: no new runs, scheduled or on demand. */
  private closing = false;
  private closed = false;
  private readonly log: Logger;
  private removeHook: (() => void) | undefined;
  private started = false;

  constructor(private readonly opts: ProbeSchedulerOptions) {
    this.now = opts.now ?? Date.now;
    this.monoNow = opts.monoNow ?? (() => performance.now());
    this.log = opts.logger.child({ component: 'probes', target: opts.target.name });
    for (const e of opts.target.endpoints) {
      this.hops.set(e.name, new EndpointDispatchers(e, tlsOptions(e, opts.baseDir)));
    }
    for (const { probe, endpoint, conn } of slotSpecs(opts.target)) {
      const hop = this.hops.get(endpoint);
      if (hop === undefined) throw new Error(`probe ${probe.name}: no endpoint named ${endpoint}`);
      this.slots.push({
        probe,
        hop,
        conn,
        labels: { target: opts.target.name, probe: probe.name, endpoint, conn, kind: probe.kind },
        refused: 0,
      });
    }
    // Every slot in flight listens for stop once (and removes it after): not a leak, just more than 10 slots.
    setMaxListeners(this.slots.length + 10, this.stopping.signal);
  }

  /** Unix ms the scheduler last planned a round (its heartbeat, exported); undefined before start. */
  lastTickAt?: number;
  /** The same moment on the monotonic clock: what the health check measures lateness on. */
  private lastTickMono?: number;

  /** Milliseconds since the last planned round on the monotonic clock; undefined before start. */
  sinceLastTickMs(): number | undefined {
    return this.lastTickMono === undefined ? undefined : this.monoNow() - this.lastTickMono;
  }

  /**
   * The longest a healthy scheduler goes between rounds: its shortest `every`. A cron expression's gaps are
   * not one number, so a cron-only target gets a day.
   */
  get tickIntervalMs(): number {
    const every = this.opts.target.probes.flatMap((p) => (p.every === undefined ? [] : [p.every]));
    return every.length > 0 ? Math.min(...every) : 86_400_000;
  }

  private heartbeat(): void {
    this.lastTickAt = this.now();
    this.lastTickMono = this.monoNow();
    this.opts.metrics.schedulerTick.set({ target: this.opts.target.name }, this.lastTickAt / 1000);
    this.opts.metrics.schedulerRounds.inc({ target: this.opts.target.name });
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.removeHook = addCollectHook(this.opts.metrics.probeInflight, () => this.updateInflight());
    this.opts.metrics.schedulerInterval.set({ target: this.opts.target.name }, this.tickIntervalMs / 1000);
    this.heartbeat();
    for (const probe of this.opts.target.probes) {
      const slots = this.slots.filter((s) => s.probe === probe);
      if (probe.cron !== undefined) {
        this.cronTasks.push(
          cron.schedule(probe.cron, () => {
            this.heartbeat();
            slots.forEach((s) => this.tick(s));
          }),
        );
      } else {
        const every = probe.every!;
        // Rounds are planned on absolute times (t0 + offset + k·every), not with setInterval: a late round under
        // load does not push every later round back, so probes keep their cadence. Each (target, probe) has its
        // own offset in the interval, as Prometheus offsets each target's scrapes: otherwise 50 targets' rounds
        // start in the same second (200 completions at the example cadence), and a /metrics scrape landing in
        // that burst waited 60–90 ms. All on the monotonic clock: planned on Date.now(), a 1 h backward step put
        // the next round an hour away (issue 24 finding 6); cron keeps the wall clock, as its expressions name it.
        const t0 = this.monoNow();
        const offset = phaseOffset(`${this.opts.target.name}\u0000${probe.name}`, every);
        // The round after the first is the first offset point at least half an interval after it.
        let round = offset >= every / 2 ? -1 : 0;
        const spread = () => {
          this.heartbeat();
          slots.forEach((s) => this.after(Math.random() * probe.jitter * every, () => this.tick(s)));
          // Rounds missed while the process was stalled are skipped, not fired back to back.
          round = Math.max(round + 1, Math.floor((this.monoNow() - t0 - offset) / every) + 1);
          this.after(t0 + offset + round * every - this.monoNow(), spread);
        };
        spread(); // first round right away (within the jitter), so a fresh daemon has a verdict soon
      }
    }
  }

  /**
   * Stops the schedules and closes every dispatcher. In-flight probes are aborted, or with `drain` left to finish
   * (bounded by their own timeouts): on a reload, cutting a chat probe mid-stream is a client disconnect, and on
   * NIXL builds without the ABORT handler that disconnect is exactly what kills the bootstrap thread. A second
   * stop() without `drain` aborts what is still draining.
   */
  async stop(opts: { drain?: boolean } = {}): Promise<void> {
    this.started = false;
    this.closing = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const task of this.cronTasks.splice(0)) await task.destroy();
    if (!opts.drain) this.stopping.abort();
    await Promise.all(this.slots.map((s) => s.inflight?.done));
    if (this.closed) return;
    this.closed = true;
    this.removeHook?.();
    for (const s of this.slots) this.opts.metrics.probeInflight.remove(s.labels);
    await Promise.all([...this.hops.values()].map((h) => h.close()));
  }

  /** Runs matching probes immediately (the detector's confirmation round); resolves with their results. */
  async runNow(filter: ProbeFilter = {}): Promise<ProbeResultSignal[]> {
    if (this.closing) return [];
    const matching = this.slots.filter(
      (s) =>
        (filter.probe === undefined || s.probe.name === filter.probe) &&
        (filter.kinds === undefined || filter.kinds.includes(s.probe.kind)) &&
        (filter.endpoint === undefined || s.labels.endpoint === filter.endpoint) &&
        (filter.conn === undefined || s.conn === filter.conn),
    );
    // A slot already in flight is joined, not doubled: its result is as fresh as a new run's would be.
    const runs = matching.map((s) => s.inflight?.done ?? this.launch(s, true));
    const out = await Promise.all(runs);
    return out.filter((r): r is ProbeResultSignal => r !== undefined);
  }

  recent(): { results: ProbeResultSignal[]; failures: ProbeResultSignal[] } {
    return { results: this.results.toArray(), failures: this.failures.toArray() };
  }

  /** Runs in flight; `firstTokenMs` once a completion's first token arrived (the detector's TTFT evidence). */
  inflight(): InflightRun[] {
    const out: InflightRun[] = [];
    for (const s of this.slots) {
      if (s.inflight) {
        out.push({
          probe: s.probe.name,
          endpoint: s.labels.endpoint,
          conn: s.conn,
          // Consumers take an age as their wall clock's now minus this: it is the monotonic age, whatever the wall
          // clock did since the launch (a 1 h forward step read as a probe hung for an hour: completions_hung).
          startedAt: this.now() - (this.monoNow() - s.inflight.startedMono),
          ...(s.inflight.progress.ttftMs !== undefined ? { firstTokenMs: s.inflight.progress.ttftMs } : {}),
          ...(s.inflight.progress.requestIds.length > 0
            ? { requestIds: [...s.inflight.progress.requestIds] }
            : {}),
        });
      }
    }
    return out;
  }

  /** The probes and hops this scheduler runs, for listings. */
  slotList(): Array<{ probe: string; kind: ProbeKind; endpoint: string; conn: ConnKind }> {
    return this.slots.map((s) => ({
      probe: s.probe.name,
      kind: s.probe.kind,
      endpoint: s.labels.endpoint,
      conn: s.conn,
    }));
  }

  private after(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  private tick(slot: Slot): void {
    if (!this.started) return;
    if (slot.inflight) {
      const start = this.now();
      this.deliver({
        kind: 'probe',
        target: slot.labels.target,
        probe: slot.probe.name,
        probeKind: slot.probe.kind,
        endpoint: slot.labels.endpoint,
        conn: slot.conn,
        result: 'skipped_overlap',
        start,
        durationMs: 0,
        error: `previous run still in flight after ${Math.round(this.monoNow() - slot.inflight.startedMono)} ms`,
      });
      return;
    }
    void this.launch(slot, false);
  }

  private launch(slot: Slot, confirmation: boolean): Promise<ProbeResultSignal | undefined> {
    const startedAt = this.now();
    const startedMono = this.monoNow();
    const progress = new Progress(false);
    const done = runProbe({
      progress,
      target: slot.labels.target,
      model: this.opts.target.model,
      probe: slot.probe,
      hop: slot.hop,
      conn: slot.conn,
      headers: this.opts.headers.get(slot.labels.endpoint) ?? {},
      cancel: this.stopping.signal,
      confirmation,
      // The wall clock at launch, advanced on the monotonic one: a wall step mid-run changes no duration.
      now: () => startedAt + (this.monoNow() - startedMono),
    })
      .then(
        (out) => {
          if (out.cancelled) return undefined;
          const before = slot.lastResult;
          this.deliver(out.signal);
          if (
            before !== undefined &&
            before !== 'ok' &&
            before !== 'skipped_overlap' &&
            out.signal.result === 'ok'
          )
            this.rerunBackedOff(slot);
          slot.refused = out.signal.result === 'connect_error' ? slot.refused + 1 : 0;
          if (!this.recheckRefused(slot) && !confirmation) this.retryFailed(slot, out.signal);
          return out.signal;
        },
        (err: unknown) => {
          // runProbe classifies every I/O failure; reaching here is a bug, logged and not a verdict.
          this.log.error({ err, probe: slot.probe.name, endpoint: slot.labels.endpoint }, 'probe run failed');
          return undefined;
        },
      )
      .finally(() => {
        slot.inflight = undefined;
      });
    slot.inflight = { startedAt, startedMono, done, progress };
    return done;
  }

  /**
   * A slot refused (nothing listening where something answered, or a first check that finds nothing) runs again
   * REFUSED_RECHECK_MS later, until detect.downAfter refusals in a row: down is then confirmed a few seconds after the
   * first refusal whatever the slot's cadence, instead of downAfter - 1 full intervals later. Bounded: at most
   * downAfter - 1 extra runs per outage, then the slot's own cadence (and a slow slot's backoff) again. True when a
   * recheck was planned.
   */
  private recheckRefused(slot: Slot): boolean {
    if (slot.refused === 0 || slot.refused >= this.opts.target.detect.downAfter) return false;
    if (slot.probe.every !== undefined && slot.probe.every <= REFUSED_RECHECK_MS) return false;
    this.after(REFUSED_RECHECK_MS, () => {
      if (!slot.inflight) this.tick(slot);
    });
    return true;
  }

  /**
   * A failed slot (or one whose pass came too late to count) on a slow schedule runs again early, backing off: after max(shortest every, 15 s), then twice
   * that, and so on until its own `every`. Issue 38: a tool-call matrix every 5 m whose run fell inside a freeze or
   * an outage kept its failure until its next round, holding the target away from ok minutes after every other
   * probe had passed again; only a run after the fault can show it recovered. A slot that keeps failing is back on
   * its own cadence after a few reruns (a bounded load), and a pass resets the backoff.
   */
  private retryFailed(slot: Slot, r: ProbeResultSignal): void {
    // A pass that was in flight hangAfter is no evidence of recovery either (src/core/reduce/slots.ts gives it no
    // okStreak): a tool-call matrix caught by a SIGSTOP finished after SIGCONT and held the target wedged until its
    // next round, 2–5 minutes on.
    const late =
      r.result === 'ok' && hangingKind(r.probeKind) && r.durationMs >= this.opts.target.detect.hangAfter;
    if ((r.result === 'ok' && !late) || r.result === 'skipped_overlap') {
      slot.retryMs = undefined;
      return;
    }
    const every = slot.probe.every;
    if (every === undefined) return; // cron names its own seconds
    const delay = slot.retryMs ?? Math.max(this.tickIntervalMs, RETRY_MIN_MS);
    if (delay >= every) return;
    slot.retryMs = delay * 2;
    this.after(delay, () => {
      // A pass since (its own round, or a rerun when the endpoint served again) ended the backoff.
      if (!slot.inflight && slot.retryMs !== undefined) this.tick(slot);
    });
  }

  /**
   * A completion slot passed after failing: the endpoint serves again, so every other slot on it that waits out a
   * retry backoff (retryFailed) runs now instead of at its next step. Issue 38: a tool-call matrix every 5 m that
   * failed through a kill -9 and backed off (15, 30, 60 s…) held the target from ok 58 s after the restart, where
   * the chat probes had passed within 20 s. Bounded: once per fail→pass edge of a completion slot, and only slots
   * already in backoff (a slot that fails on content alone reruns at most once per such edge).
   */
  private rerunBackedOff(passed: Slot): void {
    if (!isCompletion(passed.probe.kind)) return;
    for (const s of this.slots) {
      if (s === passed || s.labels.endpoint !== passed.labels.endpoint) continue;
      if (s.retryMs === undefined || s.inflight) continue;
      this.tick(s);
    }
  }

  private deliver(r: ProbeResultSignal): void {
    recordResult(this.opts.metrics, r, this.now());
    this.results.push(r);
    const slot = this.slots.find(
      (s) => s.probe.name === r.probe && s.labels.endpoint === r.endpoint && s.conn === r.conn,
    );
    if (r.result !== 'ok' && r.result !== 'skipped_overlap') this.failures.push(r);
    const changed = slot !== undefined && slot.lastResult !== r.result;
    if (slot) slot.lastResult = r.result;
    const fields = {
      probe: r.probe,
      endpoint: r.endpoint,
      conn: r.conn,
      result: r.result,
      phase: r.phase,
      status: r.status,
      durationMs: Math.round(r.durationMs),
      error: r.error,
    };
    if (changed && r.result !== 'ok') this.log.warn(fields, 'probe failing');
    else if (changed) this.log.info(fields, 'probe passing');
    else this.log.debug(fields, 'probe result');
    try {
      this.opts.onResult(r);
    } catch (err) {
      this.log.error({ err }, 'probe result consumer threw');
    }
  }

  private updateInflight(): void {
    const now = this.monoNow();
    for (const s of this.slots) {
      this.opts.metrics.probeInflight.set(
        s.labels,
        s.inflight ? Math.max(0, (now - s.inflight.startedMono) / 1000) : 0,
      );
    }
  }
}

/**
 * Where in its interval a (target, probe)'s rounds fall, in [0, every): FNV-1a of the key, so the same names keep
 * the same phase across restarts and reloads, and different ones spread over the interval.
 */
export function phaseOffset(key: string, every: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return Math.floor(((h >>> 0) / 2 ** 32) * every);
}
