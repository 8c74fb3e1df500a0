// Wires one target's signals into the classifier and its verdicts out: metrics, the events journal,
// confirmation rounds (a critical log line makes the probes run now), incident capture and remediation. Sources,
// incident capture and remediation are built by the runtime: sources only call `handle`, the two outputs are told
// of each verdict; this file never does source I/O or runs a command itself.
import type { BaselineStore } from './outputs/baselines/store.js';
import type { StoredBaseline } from './core/objective-memory.js';
import { baselineOf } from './core/reduce/objectives.js';
import { WEDGE_CAUSES } from './core/verdict/evaluate.js';
import { confirmingKinds, isCompletion, type JournalEventType, type ProbeKind } from './core/vocabulary.js';
import type { TargetConfig } from './config/schema.js';
import type { Logger } from './lib/logger.js';
import { hasSeries, type Metrics } from './metrics.js';
import { TARGET_STATES } from './core/vocabulary.js';
import type { ProbeFilter } from './sources/probes/schedule.js';
import type { RemediationHistory } from './outputs/remediate/history.js';
import type { Remediator, RemediatorCarry } from './outputs/remediate/remediator.js';
import type { FileChangeSignal, InflightRun, Signal } from './core/signals.js';
import type { Journal } from './outputs/journal/journal.js';
import type { JournalData, NewJournalEvent } from './outputs/journal/events.js';
import { eventText } from './core/event-text.js';
import type { TargetStatus } from './outputs/server/status-view.js';
import { reduceInPlace } from './core/reduce/reduce.js';
import { wrongAnswers, wrongHeld } from './core/wrong-window.js';
import { classifierConfig } from './config/classifier-config.js';
import {
  initialState,
  slotKey,
  type ClassifierConfig,
  type DetectEvent,
  type SlotMemory,
  type TargetMemory,
  type TickSignal,
} from './core/memory.js';

/** The kinds a confirmation round runs (the vocabulary's `confirms` trait). */
const CONFIRMING_KINDS = confirmingKinds() as ProbeKind[];

/** What the watchdog needs of the probe scheduler: confirmation rounds. */
export interface ConfirmationRunner {
  runNow(filter?: ProbeFilter): Promise<unknown>;
  /** Runs in flight, so a confirmation probe that hangs confirms before its timeout. */
  inflight(): InflightRun[];
}

export interface TargetWatchdogOptions {
  target: TargetConfig;
  metrics: Metrics;
  logger: Logger;
  journal: Journal;
  now?: () => number;
  /**
   * Incident capture (src/outputs/incidents/): told of every verdict change; a returned promise holds remediation until
   * it settles (the capture's own deadline bounds it).
   */
  incidents?: { onVerdict(prev: VerdictBefore, next: TargetMemory): Promise<void> | undefined };
  /**
   * Remediation (src/outputs/remediate/target.ts, built from `target.remediate` with `previous.remediation`): considers the
   * state after every step, unless an incident capture holds it; follows the pause.
   */
  remediation?: Pick<Remediator, 'consider' | 'setPaused' | 'carry' | 'idle' | 'shutdown'>;
  /** State carried over from the runtime a reload replaces. */
  previous?: { state: TargetMemory; paused: boolean; remediation?: RemediatorCarry };
  /**
   * The slot keys (core/memory.ts slotKey) the new config's probes run on: a reload keeps only their memory.
   * A slot whose probe stays but no longer runs on that hop or connection kind would keep its window (a wrong-answer
   * hold, a failure streak) with no run to end it. Without it, slots are kept by probe and hop.
   */
  slots?: ReadonlySet<string>;
  /** Persisted remediation history and pause (stateDir): restored when there is no `previous`. */
  history?: RemediationHistory;
  /** The engines' learned objectives and crawl baselines (stateDir/baselines.json): seeded at start-up, saved as learned. */
  baselines?: BaselineStore;
  /**
   * The traffic path (src/outputs/traffic/): told the memory after every step, so GET /ready, the agent and the
   * drainers read a cached answer; `status` is what the status page shows of it.
   */
  traffic?: { onStep(m: TargetMemory): void; status(): TargetStatus['traffic'] };
}

const RECENT_EVENTS = 50;

/** What handle() compares across one step of the classifier (the state itself is changed in place). */
export interface VerdictBefore {
  state: TargetMemory['state'];
  diagnosis: string | null;
  /** Each engine's stalled flag before the step; an engine absent here is new. */
  stalled: Map<string, boolean | undefined>;
}

export class TargetWatchdog {
  readonly name: string;
  private s: TargetMemory;
  private readonly cfg: ClassifierConfig;
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly remediator?: TargetWatchdogOptions['remediation'];
  private paused: boolean;
  private confirmer?: ConfirmationRunner;
  /** Ticks this target early, `ms` from now, when the core asks (Watchdog.add; none outside a running Watchdog). */
  private waker?: (ms: number) => void;
  /** An incident capture is in flight: remediation waits (at most the capture's deadline). */
  private capturing = false;

  constructor(private readonly opts: TargetWatchdogOptions) {
    this.name = opts.target.name;
    this.now = opts.now ?? Date.now;
    this.cfg = classifierConfig(opts.target);
    this.log = opts.logger.child({ component: 'detect', target: this.name });
    this.s = opts.previous
      ? carryOver(opts.previous.state, this.cfg, opts.slots)
      : initialState(this.name, this.now());
    // A start-up (not a reload, which carries the memory itself): the baselines a restart kept seed the engines.
    if (opts.previous === undefined && opts.baselines !== undefined) {
      const seeds = opts.baselines.get(this.name);
      if (Object.keys(seeds).length > 0) this.s.baselineSeeds = seeds;
    }
    const stored = opts.history?.get(this.name).paused;
    this.paused =
      opts.previous?.paused ??
      (stored !== undefined && (stored.until === undefined || stored.until > this.now()));
    this.remediator = opts.remediation;
    this.opts.metrics.remediationPaused.set({ target: this.name }, this.paused ? 1 : 0);
    // Counters start at 0 for the usual causes, so the first wedge is an increase() and not a series appearing.
    for (const cause of WEDGE_CAUSES) this.opts.metrics.wedgesTotal.inc({ target: this.name, cause }, 0);
    this.remediator?.setPaused(this.paused);
    this.exportState();
    // A reload carries the slots' windows over: their holds are exported before the next run of each.
    for (const slot of Object.values(this.s.slots)) this.exportAnswers(slot);
    this.opts.traffic?.onStep(this.s);
  }

  /** The scheduler that runs confirmation rounds (set once the sources exist). */
  setConfirmer(c: ConfirmationRunner): void {
    this.confirmer = c;
  }

  /** Who ticks this target between its periodic ticks when the core names a time (Step.wakeAt). */
  setWaker(w: ((ms: number) => void) | undefined): void {
    this.waker = w;
  }

  get state(): TargetMemory {
    return this.s;
  }

  isPaused(): boolean {
    return this.paused;
  }

  /** What a reload hands to the replacing watchdog: verdict, pause, and remediation history. */
  carry(): NonNullable<TargetWatchdogOptions['previous']> {
    return { state: this.s, paused: this.paused, remediation: this.remediator?.carry() };
  }

  /** Pauses (by whom, for how long) or resumes remediation; persisted so a restart keeps it. */
  setPaused(paused: boolean, by = 'operator', forMs?: number): void {
    const h = this.opts.history;
    if (h !== undefined) {
      // One clock read: `until` is exactly `forMs` after `at` (two reads could be a millisecond apart).
      const at = this.now();
      const pause = paused ? { by, at, ...(forMs !== undefined ? { until: at + forMs } : {}) } : undefined;
      h.set(this.name, { ...h.get(this.name), paused: pause });
    }
    if (paused === this.paused) return;
    this.paused = paused;
    this.remediator?.setPaused(paused);
    this.opts.metrics.remediationPaused.set({ target: this.name }, paused ? 1 : 0);
    this.journal(
      'remediation_pause',
      paused ? 'remediation paused by an operator' : 'remediation resumed by an operator',
      {
        paused,
      },
    );
  }

  /** Feeds one signal (or a tick) through the classifier and acts on the outcome. */
  handle(signal: Signal | TickSignal): void {
    const now = this.now();
    // The state is this watchdog's alone and is changed in place: a copy of it per signal (a tick a second, a
    // batch line, a probe, a scrape) was most of the daemon's detector CPU with 50 targets. What the step is
    // compared against is taken first; whatever keeps the state past this call gets its own copy.
    const prev: VerdictBefore = {
      state: this.s.state,
      diagnosis: this.s.diagnosis,
      stalled: new Map(Object.values(this.s.engines).map((e) => [e.service, e.stalled])),
    };
    const step = reduceInPlace(this.s, signal, now, this.cfg);
    this.s = step.state;
    // A log event's ref goes with its critical line into the journal: a restart that reads the line again
    // (src/sources/logs/watcher.ts) knows it is journaled already.
    const ref = signal.kind === 'log' ? signal.ref : undefined;
    for (const e of step.events) this.journalDetect(e, ref);
    if (signal.kind === 'file_change') this.journalFileChange(signal);
    if (step.transition || prev.diagnosis !== this.s.diagnosis) {
      this.exportState(prev);
      // An incident capture reads the state after awaits: it gets the verdict as it was, not what comes next.
      this.holdRemediation(this.opts.incidents?.onVerdict(prev, structuredClone(this.s)));
    }
    this.exportEngines(prev);
    if (signal.kind === 'engine') this.saveBaselines(now);
    if (signal.kind === 'probe') {
      const slot = this.s.slots[slotKey(signal.probe, signal.endpoint, signal.conn)];
      if (slot !== undefined) this.exportAnswers(slot);
    }
    for (const a of step.actions) {
      if (a.kind !== 'confirm' || !this.confirmer) continue;
      this.journal('confirm', `confirmation round: ${a.reason}`, { reason: a.reason });
      this.confirmer.runNow({ kinds: CONFIRMING_KINDS }).catch((err: unknown) => {
        this.log.error({ err }, 'confirmation round failed');
      });
    }
    // A pending critical line is confirmed at its deadline, not on the next periodic tick (up to 1 s later).
    if (step.wakeAt !== undefined) this.waker?.(step.wakeAt - now);
    this.opts.traffic?.onStep(this.s);
    if (!this.capturing) this.remediator?.consider(this.s);
  }

  /** The engines' learned baselines to stateDir (the store writes at most once a minute per target). */
  private saveBaselines(now: number): void {
    const store = this.opts.baselines;
    if (store === undefined) return;
    const out: Record<string, StoredBaseline> = {};
    for (const e of Object.values(this.s.engines)) {
      const b = baselineOf(e, now);
      if (b !== undefined) out[e.service] = b;
    }
    if (Object.keys(out).length > 0) store.set(this.name, out, now);
  }

  private holdRemediation(capture: Promise<void> | undefined): void {
    if (capture === undefined) return;
    this.capturing = true;
    void capture
      .catch(() => undefined)
      .then(() => {
        this.capturing = false;
        this.remediator?.consider(this.s);
      });
  }

  tick(): void {
    const until = this.opts.history?.get(this.name).paused?.until;
    if (this.paused && until !== undefined && until <= this.now()) this.setPaused(false, 'expiry');
    this.handle({ kind: 'tick', inflight: this.confirmer?.inflight() });
  }

  /** Waits for a remediation command in flight. */
  async idle(): Promise<void> {
    await this.remediator?.idle();
  }

  /** Shutdown: waits up to graceMs for a remediation command in flight, then cuts it (Remediator.shutdown). */
  async shutdownRemediation(graceMs?: number): Promise<void> {
    await this.remediator?.shutdown(graceMs);
  }

  status(): TargetStatus {
    const j = this.opts.journal;
    const okSince = this.s.lastOkAt ?? 0;
    return {
      target: this.name,
      state: this.s.state,
      since: this.s.since,
      diagnosis: this.s.diagnosis,
      cause: this.s.cause,
      ...(this.s.incident !== undefined ? { incident: this.s.incident } : {}),
      endpoints: this.cfg.hops,
      probes: Object.values(this.s.slots).flatMap((m) =>
        m.last
          ? [
              {
                probe: m.probe,
                probeKind: m.probeKind,
                endpoint: m.endpoint,
                conn: m.conn,
                failStreak: m.failStreak,
                okStreak: m.okStreak,
                ...m.last,
              },
            ]
          : [],
      ),
      engines: this.s.engines,
      lastOkAt: this.s.lastOkAt,
      recentEvents: j.query({ target: this.name, limit: RECENT_EVENTS }),
      changesSinceOk:
        this.s.state === 'ok' ? [] : j.query({ target: this.name, type: 'file_change', since: okSince - 1 }),
      remediation: {
        configured: this.opts.target.remediate !== undefined,
        dryRun: this.opts.target.remediate?.dryRun,
        paused: this.paused,
        ...(this.paused && this.opts.history?.get(this.name).paused
          ? { pause: this.opts.history.get(this.name).paused }
          : {}),
      },
      ...(this.opts.traffic !== undefined ? { traffic: this.opts.traffic.status() } : {}),
    };
  }

  private exportState(prev?: Pick<VerdictBefore, 'state' | 'diagnosis'>): void {
    const m = this.opts.metrics;
    const t = { target: this.name };
    for (const st of TARGET_STATES) m.targetState.set({ ...t, state: st }, st === this.s.state ? 1 : 0);
    m.targetWedged.set(t, this.s.state === 'wedged' ? 1 : 0);
    m.targetStateSince.set(t, this.s.since / 1000);
    // The bootstrap-thread alert compares a death with this: only a recovery after the death clears it.
    if (this.s.state === 'ok') m.targetEnteredOk.set(t, this.s.since / 1000);
    // 0 only for a target never seen before: a reload must not forget a recovery (an old death would re-fire).
    else if (!hasSeries(m.targetEnteredOk, t)) m.targetEnteredOk.set(t, 0);
    if (prev?.diagnosis && prev.diagnosis !== this.s.diagnosis)
      m.targetDiagnosis.remove({ ...t, diagnosis: prev.diagnosis });
    if (this.s.diagnosis) m.targetDiagnosis.set({ ...t, diagnosis: this.s.diagnosis }, 1);
    if (prev && this.s.state === 'wedged' && prev.state !== 'wedged') {
      m.wedgesTotal.inc({ ...t, cause: this.s.diagnosis ?? 'unknown' });
    }
  }

  private exportEngines(prev: VerdictBefore): void {
    for (const e of Object.values(this.s.engines)) {
      if (prev.stalled.has(e.service) && prev.stalled.get(e.service) === e.stalled) continue;
      this.opts.metrics.engineStalled.set({ target: this.name, service: e.service }, e.stalled ? 1 : 0);
    }
    for (const e of Object.values(this.s.engines)) {
      const labels = { target: this.name, service: e.service };
      const crawl = e.crawl;
      if (crawl === undefined) continue;
      this.opts.metrics.engineCrawling.set(labels, crawl.crawling ? 1 : 0);
      if (crawl.ratio !== undefined) this.opts.metrics.engineThroughputRatio.set(labels, crawl.ratio);
      else this.opts.metrics.engineThroughputRatio.remove(labels);
    }
  }

  /**
   * The slot's wrong-answer window as the verdict reads it (the same SlotMemory, after the same step): the alert on
   * it and the diagnosis can never disagree about the slot, only about what the target shows. The window changes
   * only when the slot's run finishes (wrong-window.ts noteAnswer), so that is when it is exported.
   */
  private exportAnswers(slot: SlotMemory): void {
    if (!isCompletion(slot.probeKind)) return;
    const labels = {
      target: this.name,
      probe: slot.probe,
      endpoint: slot.endpoint,
      conn: slot.conn,
      // The label the probe's own series carry (the config's kind; the slot keeps the kind it was made with).
      kind: this.cfg.probes[slot.probe]?.kind ?? slot.probeKind,
    };
    this.opts.metrics.probeWrongOutputHeld.set(labels, wrongHeld(slot) ? 1 : 0);
    this.opts.metrics.probeWrongAnswers.set(labels, wrongAnswers(slot));
  }

  private journal<T extends JournalEventType>(type: T, summary: string, data: JournalData[T]): void {
    this.opts.journal.append({ time: this.now(), target: this.name, type, summary, data } as NewJournalEvent);
  }

  /** The detector's event, worded once (src/core/event-text.ts) and journaled with its own fields as data. */
  private journalDetect(e: DetectEvent, ref?: string): void {
    const text = eventText(e);
    if (e.type === 'transition') {
      if (e.to === 'ok') this.log.info({ from: e.from, to: e.to }, `target state ${text}`);
      else
        this.log.warn(
          { from: e.from, to: e.to, diagnosis: e.diagnosis, cause: e.cause },
          `target state ${text}`,
        );
    } else if (e.type === 'diagnosis')
      this.log.warn({ state: e.state, from: e.from, to: e.to }, 'diagnosis changed');
    const { at: _at, ...data } = e;
    // The data of a detector event is the event without its clock (JournalData's Detected<T>); TypeScript cannot
    // correlate `e.type` with that union member through the spread, hence the cast.
    this.journal(e.type, text, {
      ...data,
      ...(e.type === 'critical_log' && ref !== undefined ? { ref } : {}),
    } as JournalData[typeof e.type]);
  }

  private journalFileChange(c: FileChangeSignal): void {
    this.journal(
      'file_change',
      `${c.path} ${c.hash === null ? 'deleted' : `changed (sha256 ${c.hash.slice(0, 12)})`}`,
      { path: c.path, hash: c.hash, ...(c.diff !== undefined ? { diff: c.diff } : {}) },
    );
  }
}

/** Keeps the verdict across a reload, dropping memory of probe slots the new config no longer runs. */
export function carryOver(
  prev: TargetMemory,
  cfg: ClassifierConfig,
  slots?: ReadonlySet<string>,
): TargetMemory {
  const s = structuredClone(prev);
  for (const [k, m] of Object.entries(s.slots)) {
    const gone = slots
      ? !slots.has(slotKey(m.probe, m.endpoint, m.conn)) || cfg.probes[m.probe]?.kind !== m.probeKind
      : !(m.probe in cfg.probes) || !cfg.hops.includes(m.endpoint);
    if (gone) delete s.slots[k];
  }
  // An engine the new config no longer scrapes or tails would keep its last busy values forever.
  for (const service of Object.keys(s.engines)) {
    if (!cfg.engines?.includes(service)) delete s.engines[service];
  }
  return s;
}

/**
 * Past a wake's time before its tick: a run's deadline is judged on its own start, which the scheduler stamps a
 * little after the step that asked for it, and a timer may fire a millisecond early by the wall clock.
 */
export const WAKE_SLACK_MS = 10;

/** Every target's watchdog; what route plugins reach as `daemon.runtime.watchdog`. */
export class Watchdog {
  readonly targets = new Map<string, TargetWatchdog>();
  private timer: NodeJS.Timeout | undefined;
  /** One early tick per target at most, the earliest asked for (Step.wakeAt). */
  private readonly wakes = new Map<TargetWatchdog, { at: number; timer: NodeJS.Timeout }>();

  constructor(
    readonly journal: Journal,
    private readonly tickMs = 1000,
  ) {}

  add(w: TargetWatchdog): void {
    this.targets.set(w.name, w);
    w.setWaker((ms) => this.wake(w, ms));
  }

  /** Ticks `w` in `ms` (plus WAKE_SLACK_MS) while running, unless an earlier wake of it is set. */
  private wake(w: TargetWatchdog, ms: number): void {
    if (this.timer === undefined) return;
    const at = Date.now() + Math.max(0, ms);
    const set = this.wakes.get(w);
    if (set !== undefined && set.at <= at) return;
    if (set !== undefined) clearTimeout(set.timer);
    const timer = setTimeout(
      () => {
        this.wakes.delete(w);
        if (this.targets.get(w.name) === w) w.tick();
      },
      at - Date.now() + WAKE_SLACK_MS,
    );
    this.wakes.set(w, { at, timer });
  }

  start(): void {
    this.timer ??= setInterval(() => {
      for (const w of this.targets.values()) w.tick();
    }, this.tickMs);
  }

  /**
   * `handover` (a reload): a remediation in flight belongs to the next runtime's remediator (it shares the run),
   * so it is not waited for. Otherwise (shutdown) it gets remediationGraceMs, then its process group is cut.
   */
  async stop(opts: { handover?: boolean; remediationGraceMs?: number } = {}): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const { timer } of this.wakes.values()) clearTimeout(timer);
    this.wakes.clear();
    if (!opts.handover)
      await Promise.all(
        [...this.targets.values()].map((w) => w.shutdownRemediation(opts.remediationGraceMs)),
      );
    await this.journal.flush();
  }

  pause(target: string, by?: string, forMs?: number): boolean {
    const w = this.targets.get(target);
    w?.setPaused(true, by, forMs);
    return w !== undefined;
  }

  resume(target: string, by?: string): boolean {
    const w = this.targets.get(target);
    w?.setPaused(false, by);
    return w !== undefined;
  }

  isPaused(target: string): boolean {
    return this.targets.get(target)?.isPaused() ?? false;
  }

  status(): TargetStatus[] {
    return [...this.targets.values()].map((w) => w.status());
  }
}
