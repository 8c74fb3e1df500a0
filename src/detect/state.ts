// The classifier: a pure reducer `(state, signal, now) → state'` per target (docs/design.md#states). No I/O,
// no clock of its own: the watchdog feeds it signals and ticks, and acts on the actions it returns.
import type { DetectConfig, TargetConfig } from '../config/schema.js';
import {
  countsForRecovery,
  type Diagnosis,
  failThreshold as kindFailThreshold,
  type TARGET_STATES,
} from '../core/vocabulary.js';
import type { ConnKind, InflightRun, ProbeKind, ProbeResultClass, RankSample, Signal } from '../signals.js';

export type { InflightRun } from '../signals.js';
import { noFirstTokenWithin } from './confirm.js';
import { isCompletion } from './kinds.js';
import { classifyLog, diagnosisRank, mostSpecific } from './log-classes.js';
import { evaluate, type Verdict } from './verdict.js';

export type TargetStateName = (typeof TARGET_STATES)[number];

/** Time passing with no signal: stall and abort-storm windows are judged on ticks too. */
export interface TickSignal {
  kind: 'tick';
  /**
   * Probe runs in flight (the scheduler's view): a hang after a critical log line confirms it, and a hang is
   * evidence for the verdict before any timeout fires.
   */
  inflight?: InflightRun[];
}

export interface ClassifierConfig {
  detect: DetectConfig;
  /** Endpoint names, outermost hop first (proxy, router, engine). */
  hops: string[];
  /** Probe name → what the classifier needs of its config. */
  probes: Record<string, { kind: ProbeKind; ttftObjective?: number }>;
  /** Services with an engine scrape or a log source (a reload drops the memory of the others). */
  engines?: string[];
}

export function classifierConfig(target: TargetConfig): ClassifierConfig {
  return {
    detect: target.detect,
    hops: target.endpoints.map((e) => e.name),
    probes: Object.fromEntries(
      target.probes.map((p) => [
        p.name,
        { kind: p.kind, ttftObjective: 'ttftObjective' in p ? p.ttftObjective : undefined },
      ]),
    ),
    engines: [...new Set([...target.engines.map((e) => e.service), ...target.logs.map((l) => l.service)])],
  };
}

export interface SlotMemory {
  probe: string;
  probeKind: ProbeKind;
  endpoint: string;
  conn: ConnKind;
  last?: {
    result: ProbeResultClass;
    start: number;
    durationMs: number;
    ttftMs?: number;
    status?: number;
    phase?: string;
    error?: string;
    reusedConnection?: boolean;
  };
  failStreak: number;
  okStreak: number;
  slowStreak: number;
  leakStreak: number;
  /** Finished runs in a row whose answer was wrong (canary) or broke its schema (structured). */
  wrongStreak?: number;
  /** keep-alive slots: the last run over a reused connection failed. */
  reusedFailed?: boolean;
  /** keep-alive slots: passes in a row that could not test a reused connection. */
  inconclusive?: number;
  /**
   * The last `intermittentWindow` finished runs, oldest first: 1 failed, 0 passed (a wrong answer or leaked markup
   * is its own diagnosis and counts as 0). One hang in three never makes two failures in a row; this does.
   */
  recent?: number[];
  /** The window holds a streak that reached the failure threshold (cleared with it once the slot recovers). */
  wedgedStreak?: boolean;
}

/** One data-parallel rank of an engine (see RankSample in signals.ts). */
export interface RankMemory {
  running: number;
  generatedTokensTotal?: number;
  lastSignalAt: number;
  /** The rank produced tokens or had nothing to run: its stall clock. */
  lastProgressAt: number;
  /** The rank produced tokens (an idle rank is no evidence that the engine's loop turns). */
  lastTokensAt?: number;
  stalled: boolean;
}

export interface EngineMemory {
  service: string;
  running: number;
  queued: number;
  transferQueue: number;
  preallocQueue: number;
  finishedTotal?: number;
  generatedTokensTotal?: number;
  lastSignalAt: number;
  lastProgressAt: number;
  stalled: boolean;
  /** Where the last good signal came from: a scrape that stops answering leaves the busy values stale. */
  lastSource?: 'metrics' | 'log';
  /** The last scrape failed: running/queued are stale, so the engine's busy state is unknown. */
  unknown?: boolean;
  /** Per data-parallel rank, from sources that report every rank whether or not it works. */
  ranks?: Record<string, RankMemory>;
  /** Since when the PD bootstrap/prealloc/transfer queues have held entries without a break. */
  queuedSince?: number;
  /** Last time those queues held entries while the engine ran and queued nothing. */
  queuedIdleAt?: number;
  /** Since when the engine has run, queued and held nothing (router_stuck needs every engine idle). */
  idleSince?: number;
  /** Routers only: HTTP requests in flight, and since when that has been above zero. */
  routerInflight?: number;
  routerBusySince?: number;
}

export interface CriticalMemory {
  time: number;
  service: string;
  rule: string;
  diagnosis: Diagnosis;
  line: string;
  /** From a user rule (ranks below built-in ones). */
  user?: boolean;
}

export interface TargetState {
  target: string;
  state: TargetStateName;
  since: number;
  diagnosis: string | null;
  cause: string;
  slots: Record<string, SlotMemory>;
  engines: Record<string, EngineMemory>;
  /** Times of recent abort lines, newest last, at most abortStormCount of them. */
  aborts: number[];
  /** Probe runs in flight at the last tick, minus those that have reported since. */
  inflight?: InflightRun[];
  /** A critical log event waiting for a probe to confirm it. */
  pendingCritical?: CriticalMemory;
  /** A critical log event a failing probe confirmed: the target stays wedged with its diagnosis until ok. */
  confirmedCritical?: CriticalMemory;
  /** Critical events since the target was last ok (bounded): they name the cause of a later wedge. */
  criticalSinceOk: CriticalMemory[];
  lastConfirmAt?: number;
  /** Unix ms the target was last seen ok (now while it is ok). */
  lastOkAt?: number;
  /**
   * Request ids our own probes sent, newest last, each with how many more abort lines it may discount (an engine
   * logs one abort per TP rank and per PD side). Only ids we generated; bounded, so a line that repeats one can
   * hide at most that many aborts, and only while the id is recent.
   */
  ownIds?: Array<{ id: string; left: number }>;
  /** Abort lines discounted as our own probes' (timed out or cut by the watchdog itself). */
  ownAborts?: number;
  counters: {
    signals: number;
    transitions: number;
    wedges: number;
    criticalEvents: number;
    confirmations: number;
  };
}

export interface Transition {
  from: TargetStateName;
  to: TargetStateName;
  at: number;
  diagnosis: string | null;
  cause: string;
}

export type Action = { kind: 'confirm'; reason: string };

export type DetectEvent =
  | ({ type: 'transition' } & Transition)
  | {
      type: 'diagnosis';
      at: number;
      state: TargetStateName;
      from: string | null;
      to: string | null;
      cause: string;
    }
  | { type: 'critical_log'; at: number; service: string; rule: string; diagnosis: string; line: string }
  | { type: 'critical_confirmed'; at: number; rule: string; diagnosis: string; by: string }
  | { type: 'critical_unconfirmed'; at: number; rule: string; by: string }
  | {
      type: 'probe_failing';
      at: number;
      probe: string;
      endpoint: string;
      conn: ConnKind;
      result: ProbeResultClass;
      streak: number;
      error?: string;
    }
  | { type: 'probe_recovered'; at: number; probe: string; endpoint: string; conn: ConnKind }
  | {
      type: 'engine_stalled';
      at: number;
      service: string;
      running: number;
      queued: number;
      transferQueue: number;
      preallocQueue: number;
      sinceMs: number;
    }
  | { type: 'engine_progress'; at: number; service: string }
  | {
      type: 'rank_stalled';
      at: number;
      service: string;
      rank: string;
      running: number;
      sinceMs: number;
    };

export interface Step {
  state: TargetState;
  actions: Action[];
  events: DetectEvent[];
  transition?: Transition;
}

const CRITICAL_KEEP = 10;
const LINE_KEEP = 500;
/** Request ids of our own probes remembered (a toolcall matrix sends 7 a run, a canary a few). */
const OWN_IDS_KEEP = 256;
/** Abort lines one of our ids may discount: one per TP rank on each PD side of a large deployment. */
const OWN_ID_ABORTS = 16;

export function initialState(target: string, now: number): TargetState {
  return {
    target,
    state: 'unknown',
    since: now,
    diagnosis: null,
    cause: 'no verdict yet',
    slots: {},
    engines: {},
    aborts: [],
    criticalSinceOk: [],
    counters: { signals: 0, transitions: 0, wedges: 0, criticalEvents: 0, confirmations: 0 },
  };
}

export function slotKey(probe: string, endpoint: string, conn: ConnKind): string {
  return `${probe}|${endpoint}|${conn}`;
}

export { isCompletion } from './kinds.js';

/** The run finished with an answer the probe rejected: the engine is not wedged, its output is wrong. */
const answeredWrong = (r: ProbeResultClass) => r === 'toolcall_leak' || r === 'wrong_output';

/** The failure streak at which a slot counts as failing (the kind's trait: health probes use downAfter). */
export function failThreshold(kind: ProbeKind, d: DetectConfig): number {
  return kindFailThreshold(kind, d);
}

export function reduce(
  prev: TargetState,
  signal: Signal | TickSignal,
  now: number,
  cfg: ClassifierConfig,
): Step {
  return reduceInPlace(structuredClone(prev), signal, now, cfg);
}

/**
 * `reduce` on a state the caller owns and never looks back at: no copy. replay feeds a million batch lines through
 * the core, where the copy per signal was most of the cost (34.5 s of CPU on 1M lines).
 */
export function reduceInPlace(
  s: TargetState,
  signal: Signal | TickSignal,
  now: number,
  cfg: ClassifierConfig,
): Step {
  const events: DetectEvent[] = [];
  const actions: Action[] = [];
  if (signal.kind !== 'tick') s.counters.signals++;

  switch (signal.kind) {
    case 'probe': {
      if (signal.result === 'skipped_overlap') break;
      rememberOwnIds(s, signal.requestIds);
      // The run has finished: its result replaces what its time in flight suggested.
      s.inflight = s.inflight?.filter(
        (i) => !(i.probe === signal.probe && i.endpoint === signal.endpoint && i.conn === signal.conn),
      );
      const kind = cfg.probes[signal.probe]?.kind ?? signal.probeKind;
      const key = slotKey(signal.probe, signal.endpoint, signal.conn);
      const slot = (s.slots[key] ??= {
        probe: signal.probe,
        probeKind: kind,
        endpoint: signal.endpoint,
        conn: signal.conn,
        failStreak: 0,
        okStreak: 0,
        slowStreak: 0,
        leakStreak: 0,
      });
      const threshold = failThreshold(kind, cfg.detect);
      const wasFailing = slot.failStreak >= threshold;
      // A pass over a new connection says nothing about reused ones: after a failure on a reused keep-alive
      // connection it neither clears the failure nor counts toward recovery ("fresh is fast, reused stalls").
      // The run right after a failure is on a new connection whatever the client believes: the failed run
      // (a timeout, a reset) closed the old one.
      // Bounded: a server that closes every idle connection never lets a reused run happen, and must not hold
      // the state hostage.
      const prevFailed =
        slot.last !== undefined && slot.last.result !== 'ok' && !answeredWrong(slot.last.result);
      const inconclusive =
        signal.conn === 'keepalive' &&
        signal.result === 'ok' &&
        slot.failStreak > 0 &&
        slot.reusedFailed === true &&
        // A primed run went second on a connection it opened itself: a reuse whatever came before.
        (signal.reusedConnection === false || (prevFailed && signal.primedConnection !== true)) &&
        (slot.inconclusive ?? 0) < cfg.detect.recoverAfter;
      if (inconclusive) slot.inconclusive = (slot.inconclusive ?? 0) + 1;
      else slot.inconclusive = 0;
      if (signal.conn === 'keepalive' && signal.reusedConnection !== false) {
        if (signal.result === 'ok') slot.reusedFailed = false;
        else if (!answeredWrong(signal.result)) slot.reusedFailed = true;
      }
      if (signal.result === 'ok') {
        if (!inconclusive) {
          // A finished completion went through this target's engines: they are not stuck, whatever their
          // gauges say (SGLang's log-derived gauges freeze at the last logged batch).
          if (isCompletion(kind)) for (const e of Object.values(s.engines)) e.lastProgressAt = now;
          slot.failStreak = 0;
          slot.okStreak++;
          slot.leakStreak = 0;
          slot.wrongStreak = 0;
          const objective = cfg.probes[signal.probe]?.ttftObjective;
          const slow = objective !== undefined && signal.ttftMs !== undefined && signal.ttftMs > objective;
          slot.slowStreak = slow ? slot.slowStreak + 1 : 0;
          // A slow pass is no evidence of recovery from slow: back to ok needs recoverAfter fast ones.
          if (slow) slot.okStreak = 0;
        }
      } else if (signal.result === 'toolcall_leak') {
        // The completion finished, so the engine is not wedged: a parser problem, counted on its own.
        slot.failStreak = 0;
        slot.okStreak = 0;
        slot.slowStreak = 0;
        slot.leakStreak++;
        slot.wrongStreak = 0;
      } else if (signal.result === 'wrong_output') {
        // Finished too, and worse: the deployment serves garbage. Degraded at once (verdict.ts).
        slot.failStreak = 0;
        slot.okStreak = 0;
        slot.slowStreak = 0;
        slot.leakStreak = 0;
        slot.wrongStreak = (slot.wrongStreak ?? 0) + 1;
      } else {
        slot.failStreak++;
        slot.okStreak = 0;
        slot.slowStreak = 0;
        slot.leakStreak = 0;
        slot.wrongStreak = 0;
      }
      slot.last = {
        result: signal.result,
        start: signal.start,
        durationMs: signal.durationMs,
        ttftMs: signal.ttftMs,
        status: signal.status,
        phase: signal.phase,
        error: signal.error,
        reusedConnection: signal.reusedConnection,
      };
      if (isCompletion(kind)) {
        const failed = signal.result !== 'ok' && !answeredWrong(signal.result);
        slot.recent = [...(slot.recent ?? []), failed ? 1 : 0].slice(-cfg.detect.intermittentWindow);
        // A streak that made the slot fail was a wedge, judged as one: once the slot has recovered from it
        // (recoverAfter passes in a row) its failures are not intermittence. Streaks that come and go between
        // single passes stay in the window.
        if (slot.failStreak >= threshold) slot.wedgedStreak = true;
        else if (slot.wedgedStreak === true && slot.okStreak >= cfg.detect.recoverAfter) {
          slot.recent = [];
          slot.wedgedStreak = false;
        }
      }
      const label = `${signal.probe} on ${signal.endpoint}/${signal.conn}`;
      if (slot.failStreak === threshold && signal.result !== 'ok') {
        events.push({
          type: 'probe_failing',
          at: now,
          probe: signal.probe,
          endpoint: signal.endpoint,
          conn: signal.conn,
          result: signal.result,
          streak: slot.failStreak,
          error: signal.error,
        });
      } else if (wasFailing && slot.failStreak === 0) {
        events.push({
          type: 'probe_recovered',
          at: now,
          probe: signal.probe,
          endpoint: signal.endpoint,
          conn: signal.conn,
        });
      }
      const pending = s.pendingCritical;
      if (pending && isCompletion(kind)) {
        const failed = signal.result !== 'ok' && !answeredWrong(signal.result);
        // A failure confirms when it came with no first token in time; a run cut mid-stream is a slow stream.
        const end = signal.start + signal.durationMs;
        const noToken =
          signal.ttftMs === undefined ||
          signal.start + signal.ttftMs > Math.max(signal.start, pending.time) + cfg.detect.confirmAfter;
        if (failed && end >= pending.time && noToken) {
          s.confirmedCritical = pending;
          s.pendingCritical = undefined;
          events.push({
            type: 'critical_confirmed',
            at: now,
            rule: pending.rule,
            diagnosis: pending.diagnosis,
            by: `${label}: ${signal.result}`,
          });
        } else if (signal.result === 'ok' && !inconclusive && signal.start >= pending.time) {
          s.pendingCritical = undefined;
          // A line a later completion passed past is not the cause of a wedge that comes afterwards.
          s.criticalSinceOk = s.criticalSinceOk.filter(
            (c) => !(c.time === pending.time && c.rule === pending.rule && c.service === pending.service),
          );
          events.push({ type: 'critical_unconfirmed', at: now, rule: pending.rule, by: `${label} passed` });
        }
      }
      break;
    }
    case 'log': {
      const cls = classifyLog(signal);
      if (cls.kind === 'critical') {
        const mem: CriticalMemory = {
          time: signal.time,
          service: signal.service,
          rule: signal.rule,
          diagnosis: cls.diagnosis,
          line: signal.line.slice(0, LINE_KEEP),
          ...(signal.user === true ? { user: true } : {}),
        };
        s.counters.criticalEvents++;
        s.criticalSinceOk.push(mem);
        // Bounded, but the most specific line stays: it names the wedge however many lines follow it.
        if (s.criticalSinceOk.length > CRITICAL_KEEP) {
          const keep = mostSpecific(s.criticalSinceOk);
          const drop = s.criticalSinceOk.findIndex((c) => c !== keep);
          s.criticalSinceOk.splice(drop, 1);
        }
        // The most specific evidence waits for confirmation, not the latest line: a user rule's line after the
        // thread death does not replace it, and a confirmed diagnosis holds until the target recovers unless a
        // more specific line comes to be confirmed in turn.
        const held = s.pendingCritical ?? s.confirmedCritical;
        if (held === undefined || diagnosisRank(mem) > diagnosisRank(held)) s.pendingCritical = mem;
        events.push({ type: 'critical_log', at: now, ...mem });
        if (s.lastConfirmAt === undefined || now - s.lastConfirmAt >= cfg.detect.confirmInterval) {
          s.lastConfirmAt = now;
          s.counters.confirmations++;
          actions.push({ kind: 'confirm', reason: `${signal.rule} on ${signal.service}` });
        }
      } else if (cls.kind === 'abort') {
        // Our own probe's abort (it timed out or was cut): the engine logged the id we sent. Not a storm.
        const own =
          signal.fields.rid !== undefined ? s.ownIds?.find((o) => o.id === signal.fields.rid) : undefined;
        if (own !== undefined && own.left > 0) {
          own.left--;
          s.ownAborts = (s.ownAborts ?? 0) + 1;
          break;
        }
        s.aborts.push(signal.time);
        if (s.aborts.length > cfg.detect.abortStormCount) s.aborts.shift();
      }
      break;
    }
    case 'engine': {
      const e = (s.engines[signal.service] ??= {
        service: signal.service,
        running: 0,
        queued: 0,
        transferQueue: 0,
        preallocQueue: 0,
        lastSignalAt: now,
        lastProgressAt: now,
        stalled: false,
      });
      if (signal.source === 'metrics' && signal.scrapeOk === false) {
        // Busy values from before the failure say nothing now: no stall is judged on them.
        e.unknown = true;
        break;
      }
      // The stall clock restarts when the busy state is known again, so a scrape outage is not a stall.
      if (busyUnknown(e, now, cfg)) e.lastProgressAt = now;
      e.unknown = false;
      e.lastSource = signal.source;
      let progress: boolean;
      if (signal.source === 'log') {
        // Progress means tokens: a batch line that ran a batch says so (engine-lines.ts), a stats line with
        // `0.0 tokens/s` or a batch with no generated tokens does not, and any other line (a rule's extracted
        // gauge) is no evidence at all. Before issue 13 every such line restarted the stall clock.
        progress = signal.progress === true;
      } else {
        // Counters that went up: a drop is a restart (its counters start over), not work done.
        const moved = (a: number | undefined, b: number | undefined) =>
          a !== undefined && b !== undefined && a > b;
        progress =
          moved(signal.finishedTotal, e.finishedTotal) ||
          moved(signal.generatedTokensTotal, e.generatedTokensTotal);
        if (signal.finishedTotal !== undefined) e.finishedTotal = signal.finishedTotal;
        if (signal.generatedTokensTotal !== undefined) e.generatedTokensTotal = signal.generatedTokensTotal;
      }
      if (signal.running !== undefined) e.running = signal.running;
      if (signal.queued !== undefined) e.queued = signal.queued;
      if (signal.transferQueue !== undefined) e.transferQueue = signal.transferQueue;
      if (signal.preallocQueue !== undefined) e.preallocQueue = signal.preallocQueue;
      e.lastSignalAt = now;
      if (progress) e.lastProgressAt = now;
      if (signal.routerInflight !== undefined) {
        e.routerInflight = signal.routerInflight;
        e.routerBusySince = signal.routerInflight > 0 ? (e.routerBusySince ?? now) : undefined;
      }
      trackQueues(e, now);
      for (const [id, r] of Object.entries(signal.ranks ?? {})) trackRank(e, id, r, now);
      break;
    }
    case 'tick':
      s.inflight = signal.inflight ?? [];
      for (const run of s.inflight) rememberOwnIds(s, run.requestIds);
      break;
    case 'file_change':
      break;
  }

  confirmByHang(s, now, cfg, events);
  judgeEngines(s, now, cfg, events);
  judgeRanks(s, now, cfg, events);
  pruneAborts(s, now, cfg);
  const step = applyVerdict(s, evaluate(s, now, cfg), now, cfg, events);
  return { state: s, actions, events, transition: step };
}

/**
 * A completion run still in flight confirmAfter after a critical line confirms it, judged on every signal (the
 * verdict counts the same hang as a failure, and the two must agree).
 */
function confirmByHang(s: TargetState, now: number, cfg: ClassifierConfig, events: DetectEvent[]): void {
  const pending = s.pendingCritical;
  if (!pending) return;
  const hung = s.inflight?.find(
    (i) =>
      isCompletion(cfg.probes[i.probe]?.kind) &&
      noFirstTokenWithin(i.startedAt, i.firstTokenMs, pending.time, now, cfg.detect.confirmAfter),
  );
  if (!hung) return;
  s.confirmedCritical = pending;
  s.pendingCritical = undefined;
  events.push({
    type: 'critical_confirmed',
    at: now,
    rule: pending.rule,
    diagnosis: pending.diagnosis,
    by: `${hung.probe} on ${hung.endpoint}/${hung.conn} in flight for ${Math.round((now - hung.startedAt) / 1000)} s`,
  });
}

/**
 * The busy values are stale: the last scrape failed, or scrapes stopped arriving (a scraped engine reports
 * every few seconds; log-only engines are silent while stalled, so silence there is the evidence).
 */
function busyUnknown(e: EngineMemory, now: number, cfg: ClassifierConfig): boolean {
  return e.unknown === true || (e.lastSource === 'metrics' && now - e.lastSignalAt >= cfg.detect.stallAfter);
}

function judgeEngines(s: TargetState, now: number, cfg: ClassifierConfig, events: DetectEvent[]): void {
  for (const e of Object.values(s.engines)) {
    const unknown = busyUnknown(e, now, cfg);
    const busy = !unknown && e.running + e.queued + e.transferQueue + e.preallocQueue > 0;
    // An idle engine is not stalled, and the stall clock starts when it gets work.
    if (!busy && !unknown) e.lastProgressAt = Math.max(e.lastProgressAt, e.lastSignalAt);
    const stalled = busy && now - e.lastProgressAt >= cfg.detect.stallAfter;
    if (stalled && !e.stalled) {
      events.push({
        type: 'engine_stalled',
        at: now,
        service: e.service,
        running: e.running,
        queued: e.queued,
        transferQueue: e.transferQueue,
        preallocQueue: e.preallocQueue,
        sinceMs: now - e.lastProgressAt,
      });
    } else if (!stalled && e.stalled && !unknown) {
      events.push({ type: 'engine_progress', at: now, service: e.service });
    }
    e.stalled = stalled;
  }
}

/** Adds ids our probes sent to the bounded recent set (an id already there keeps its count). */
function rememberOwnIds(s: TargetState, ids: readonly string[] | undefined): void {
  if (ids === undefined || ids.length === 0) return;
  const own = (s.ownIds ??= []);
  for (const id of ids) {
    if (own.some((o) => o.id === id)) continue;
    own.push({ id, left: OWN_ID_ABORTS });
  }
  if (own.length > OWN_IDS_KEEP) own.splice(0, own.length - OWN_IDS_KEEP);
}

/** The leak and idle clocks: how long the PD queues have held entries, and how long the engine has been idle. */
function trackQueues(e: EngineMemory, now: number): void {
  const work = e.running + e.queued;
  const pd = e.transferQueue + e.preallocQueue;
  if (pd > 0) {
    e.queuedSince ??= now;
    if (work === 0) e.queuedIdleAt = now;
  } else {
    e.queuedSince = undefined;
    e.queuedIdleAt = undefined;
  }
  e.idleSince = work + pd === 0 ? (e.idleSince ?? now) : undefined;
}

function trackRank(e: EngineMemory, id: string, r: RankSample, now: number): void {
  const m = ((e.ranks ??= {})[id] ??= { running: 0, lastSignalAt: now, lastProgressAt: now, stalled: false });
  const tokens =
    r.progress ??
    (r.generatedTokensTotal !== undefined &&
      m.generatedTokensTotal !== undefined &&
      r.generatedTokensTotal > m.generatedTokensTotal);
  if (r.generatedTokensTotal !== undefined) m.generatedTokensTotal = r.generatedTokensTotal;
  if (r.running !== undefined) m.running = r.running;
  m.lastSignalAt = now;
  if (tokens) m.lastTokensAt = now;
  // An idle rank is not stalled: its clock starts when it gets work.
  if (tokens || m.running === 0) m.lastProgressAt = now;
}

/**
 * One rank holding work with no tokens for stallAfter while a sibling produced tokens within it: that rank is
 * stuck on its own (the engine as a whole progresses, so the engine stall never fires). A rank that stopped
 * reporting is unknown, not stalled: the engine-level judgement covers silence.
 */
function judgeRanks(s: TargetState, now: number, cfg: ClassifierConfig, events: DetectEvent[]): void {
  const after = cfg.detect.stallAfter;
  for (const e of Object.values(s.engines)) {
    const ranks = Object.entries(e.ranks ?? {});
    if (ranks.length < 2) continue;
    for (const [id, r] of ranks) {
      const reporting = now - r.lastSignalAt < after;
      const siblingWorks = ranks.some(
        ([other, o]) => other !== id && o.lastTokensAt !== undefined && now - o.lastTokensAt < after,
      );
      const stalled =
        reporting &&
        !busyUnknown(e, now, cfg) &&
        r.running > 0 &&
        now - r.lastProgressAt >= after &&
        siblingWorks;
      if (stalled && !r.stalled) {
        events.push({
          type: 'rank_stalled',
          at: now,
          service: e.service,
          rank: id,
          running: r.running,
          sinceMs: now - r.lastProgressAt,
        });
      }
      r.stalled = stalled;
    }
  }
}

function pruneAborts(s: TargetState, now: number, cfg: ClassifierConfig): void {
  // Aborts before a wedge are its prelude (an abort cascade is how the NIXL thread dies): once the target
  // is wedged they are attributed to it, so a remediated target does not stay degraded on old aborts.
  const wedgeStart = s.state === 'wedged' || s.state === 'down' ? s.since : -Infinity;
  const from = Math.max(now - cfg.detect.abortStormWindow, wedgeStart);
  while (s.aborts.length > 0 && s.aborts[0]! < from) s.aborts.shift();
}

/** Hysteresis: worse verdicts apply at once; back to ok needs recoverAfter passes on every slot. */
function applyVerdict(
  s: TargetState,
  v: Verdict,
  now: number,
  cfg: ClassifierConfig,
  events: DetectEvent[],
): Transition | undefined {
  if (v.state === 'unknown') return undefined;
  if (v.state === 'ok') {
    if (s.state === 'ok') {
      s.lastOkAt = now;
      // Staying ok clears what the passes post-date too, or an old line would name a wedge hours later.
      const evidence = oldestPassingCompletion(s, now);
      s.criticalSinceOk = s.criticalSinceOk.filter((c) => c.time > evidence);
      return undefined;
    }
    if (!v.clean) return undefined;
  }
  // Getting better (wedged → degraded → ok) waits until the passing slots have passed recoverAfter times,
  // so one lucky probe mid-round does not flap the state.
  if (s.state !== 'unknown' && RANK[v.state] < RANK[s.state] && !recovered(s, cfg)) return undefined;
  if (v.state === s.state) {
    if (v.diagnosis !== s.diagnosis) {
      events.push({
        type: 'diagnosis',
        at: now,
        state: s.state,
        from: s.diagnosis,
        to: v.diagnosis,
        cause: v.cause,
      });
      s.diagnosis = v.diagnosis;
      s.cause = v.cause;
    }
    return undefined;
  }
  const t: Transition = { from: s.state, to: v.state, at: now, diagnosis: v.diagnosis, cause: v.cause };
  if (s.state === 'ok') s.lastOkAt = now;
  s.state = v.state;
  s.since = now;
  s.diagnosis = v.diagnosis;
  s.cause = v.cause;
  s.counters.transitions++;
  if (v.state === 'wedged') s.counters.wedges++;
  if (v.state === 'ok') {
    s.lastOkAt = now;
    // Passes only clear what they post-date: a critical line written while the passing round was already in
    // flight (the first round after startup, say, when the thread dies mid-round) still stands.
    const evidence = oldestPassingCompletion(s, now);
    s.criticalSinceOk = s.criticalSinceOk.filter((c) => c.time > evidence);
    s.confirmedCritical = undefined;
    if (s.pendingCritical !== undefined && s.pendingCritical.time <= evidence) s.pendingCritical = undefined;
  }
  events.push({ type: 'transition', ...t });
  return t;
}

/** When the oldest passing completion probe started: what happened before then, the passes have seen past. */
function oldestPassingCompletion(s: TargetState, now: number): number {
  let oldest = Infinity;
  for (const m of Object.values(s.slots)) {
    if (isCompletion(m.probeKind) && m.last?.result === 'ok') oldest = Math.min(oldest, m.last.start);
  }
  // With no completion passing, no pass has seen past anything: nothing is cleared.
  return oldest === Infinity ? -Infinity : Math.min(oldest, now);
}

const RANK: Record<TargetStateName, number> = { unknown: -1, ok: 0, degraded: 1, wedged: 2, down: 3 };

/** Every slot that is passing now has passed recoverAfter times in a row. */
function recovered(s: TargetState, cfg: ClassifierConfig): boolean {
  return Object.values(s.slots)
    .filter(
      (m) =>
        countsForRecovery(m.probeKind) &&
        m.last !== undefined &&
        m.failStreak === 0 &&
        m.leakStreak === 0 &&
        !m.wrongStreak,
    )
    .every((m) => m.okStreak >= cfg.detect.recoverAfter);
}
