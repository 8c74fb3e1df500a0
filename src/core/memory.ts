// What the classifier remembers of one target between signals, and the shapes it returns (docs/design.md#states).
// Types and constructors only: the reducer (reduce.ts) and its parts change this memory, nothing here does.
import type { DetectSettings } from './detect-settings.js';
import type { Diagnosis, EvidenceKind, LogEventClass, TargetStateName } from './vocabulary.js';
import type { ConnKind, InflightRun, ProbeKind, ProbeResultClass } from './signals.js';
import type { NodeEventKind, NodeMemory } from './node-memory.js';
import type { ObjectiveMemory, ObjectiveSettings, StoredBaseline } from './objective-memory.js';
import type { EngineProgress, TargetProgress } from './progress-memory.js';

export type { InflightRun } from './signals.js';

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
  detect: DetectSettings;
  /** Endpoint names, outermost hop first (proxy, router, engine). */
  hops: string[];
  /** Probe name → what the classifier needs of its config. */
  probes: Record<string, { kind: ProbeKind; ttftObjective?: number; promptTokens?: number; rounds?: number }>;
  /** Services with an engine scrape or a log source (a reload drops the memory of the others). */
  engines?: string[];
  /** Per-target inter-token latency and queue-time objectives (ms); absent ones are learned (objective-memory.ts). */
  objectives?: ObjectiveSettings;
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
  /** When the first run of the current failure streak started (undefined while not failing). */
  failSince?: number;
  okStreak: number;
  slowStreak: number;
  leakStreak: number;
  /** Answer-checking probes: the last WRONG_WINDOW answers, oldest first, 1 wrong (src/core/wrong-window.ts). */
  answers?: number[];
  /** The window made the slot `wrong_output`; it stays until WRONG_WINDOW clean answers in a row. */
  wrongHeld?: boolean;
  /** When the first clean answer since the last wrong one started (the window's time bound, WRONG_HOLD_MS). */
  cleanSince?: number;
  /** Answer-checking probes: the slot has given a right answer at least once since the memory began. */
  answeredRight?: boolean;
  /** What the probe said of the last wrong answer (expected and got), kept past the passes after it. */
  lastWrong?: string;
  /** keep-alive slots: the last run over a reused connection failed. */
  reusedFailed?: boolean;
  /** keep-alive slots: passes in a row that could not test a reused connection. */
  inconclusive?: number;
  /**
   * The last `intermittentWindow` finished runs, oldest first: 1 failed, 0 passed (a wrong answer or leaked markup
   * is its own diagnosis and counts as 0). One hang in three never makes two failures in a row; this does.
   */
  recent?: number[];
  /** Beside `recent`, run for run: when each run started (the window's time bound, INTERMITTENT_SPAN_MS). */
  recentAt?: number[];
  /** Beside `recent`, run for run: 1 when the run went over a reused (kept or primed) connection. */
  recentReused?: number[];
}

/**
 * Tokens per second per running request against the engine's (or rank's) own trailing baseline: a crawl is a
 * collapse of that rate, not its absence (no tokens at all is a stall).
 */
export interface CrawlMemory {
  /** Trailing baseline of the per-request rate (an average of samples that were not a collapse). */
  baseline?: number;
  /** Samples in the baseline (it is trusted from BASELINE_SAMPLES on). */
  samples: number;
  /** The last rate measured, as a fraction of the baseline. */
  ratio?: number;
  /**
   * Since when every sample has been below crawlFraction of the baseline. Idle gaps between probe runs neither
   * stop nor restart it (issue 41): only a sample at the baseline does, or no sample below for stallAfter.
   */
  belowSince?: number;
  /** The last sample below the fraction (or in the hysteresis band above it). */
  lastBelowAt?: number;
  crawling: boolean;
  /** Metrics sources without a throughput gauge: the token counter and time of the last sample. */
  lastTokens?: number;
  lastAt?: number;
  lastRunning?: number;
  /** Requests running at the last reported throughput (a gauge or a stats line), to judge the next one's interval. */
  lastReportedRunning?: number;
  /** vLLM's inter-token latency histogram at the last sample: its `_sum` (seconds) and `_count`. */
  lastItl?: { sum: number; count: number; at: number };
}

/** The engine's own failure counters' last values and their recent increases (bounded, within failureWindow). */
export interface FailureMemory {
  totals: Partial<Record<EngineFailureKind, number>>;
  recent: Array<{ at: number; kind: EngineFailureKind; n: number }>;
}

/** The failure counters the core reads (src/sources/engines/failures.ts names the same four for the gauges). */
export type EngineFailureKind = 'kv_transfer_failed' | 'kv_expired' | 'aborted' | 'preempted';

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
  crawl?: CrawlMemory;
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
  /**
   * The last few readings' running counts, [time, running], oldest first (at most RECENT_RUNNING): a probe run that
   * overlapped one holding more than our completions then was served beside a load, though the reading after it
   * shows none.
   */
  recentRunning?: Array<[number, number]>;
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
  /** Routers only: the last reading with requests in flight. */
  routerLastBusyAt?: number;
  /** Routers only: a lower bound on the age of the oldest request in flight, and when it was read. */
  routerOldestMs?: number;
  /** Routers only: workers unhealthy and circuits open, as last reported. */
  workersUnhealthy?: number;
  circuitOpen?: number;
  /** The engine says it is asleep (vLLM sleep mode): holding requests is no stall, slow tokens no crawl. */
  sleeping?: boolean;
  crawl?: CrawlMemory;
  /** Its inter-token latency and queue-time objectives and their clocks (reduce/objectives.ts). */
  objectives?: ObjectiveMemory;
  failures?: FailureMemory;
  /** The smallest PD queue total since `queuedSince` (the leak floor: entries nothing ever pops). */
  queueFloor?: number;
  /** Decode steps (llama.cpp n_decode_total): a progress counter that moves with every step, not at a request's end. */
  decodeStepsTotal?: number;
  /** The engine's own progress and reporting, whatever its gauges claim (core/reduce/progress.ts). */
  progress?: EngineProgress;
}

/** A warning line of a class that can name an incident (core/reduce/warnings.ts). */
export interface WarningMemory {
  time: number;
  service: string;
  rule: string;
  class: LogEventClass;
  line: string;
}

export interface CriticalMemory {
  time: number;
  service: string;
  rule: string;
  diagnosis: Diagnosis;
  line: string;
  /** From a user rule (ranks below built-in ones). */
  user?: boolean;
  /** The final exception of the incident's traceback chain (`RuntimeError: CUDA error: …`), when known. */
  rootCause?: string;
  /** Matches of the incident besides this line (its chain). */
  absorbed?: number;
}

/** One piece of evidence an incident saw: the diagnosis it names and the cause that proved it, first seen. */
export interface IncidentEvidence {
  diagnosis: Diagnosis;
  evidence: EvidenceKind;
  /** Among signatures, how specific the critical line is (a user rule's ranks lowest). */
  rank: number;
  cause: string;
  at: number;
}

/** The incident open since the target left ok (core/reduce/incident.ts). */
export interface IncidentMemory {
  since: number;
  /** The diagnosis shown now. */
  diagnosis: Diagnosis;
  /** Every diagnosis the verdict reached during the incident (bounded: the weakest go first). */
  seen: IncidentEvidence[];
  /** When the target first went down in this incident: only evidence from before it names the death. */
  downSince?: number;
  /**
   * When the target last left wedged or down for degraded in this incident: engine failures counted before it were
   * the wedge's (its stuck requests failing as the restart let them go), and hold nothing past it.
   */
  servesSince?: number;
}

export interface TargetMemory {
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
  /** The incident open since the target was last ok (absent while ok). */
  incident?: IncidentMemory;
  /** A critical log event waiting for a probe to confirm it. */
  pendingCritical?: CriticalMemory;
  /**
   * A critical log event a failing probe confirmed: the target stays wedged with its diagnosis until every completion
   * passes past it; leaving the wedge for degraded spends it (reduce/hysteresis.ts), ok clears it.
   */
  confirmedCritical?: CriticalMemory;
  /** Recent warnings of classes that can name an incident, newest last (bounded). */
  warnings?: WarningMemory[];
  /** Critical events since the target was last ok (bounded): they name the cause of a later wedge. */
  criticalSinceOk: CriticalMemory[];
  lastConfirmAt?: number;
  /**
   * The last evaluation's state before hysteresis: better than `state` while the evidence already shows a recovery
   * the state waits to confirm (remediation reads it and does not act then).
   */
  verdict?: TargetStateName;
  /**
   * Unix ms of the engine's last sign of serving: a completion of ours got its first token or finished, or an
   * engine's own tokens or finished requests moved (a log line that ran a batch; scraped counters that went up,
   * credited at the scrape before, the earliest they can have moved). A hang past a critical line confirms it only
   * when nothing served while the run waited (confirm.ts confirmsLine).
   */
  servingAt?: number;
  /** Unix ms the target was last seen ok (now while it is ok). */
  lastOkAt?: number;
  /**
   * Request ids our own probes sent, newest last, each with how many more abort lines it may discount (an engine
   * logs one abort per TP rank and per PD side). Only ids we generated; bounded, so a line that repeats one can
   * hide at most that many aborts, and only while the id is recent.
   */
  ownIds?: Array<{ id: string; left: number }>;
  /**
   * Baselines a restart kept (stateDir/baselines.json), by service: each seeds its engine's memory when the engine
   * is first heard from, and is dropped then (reduce/objectives.ts seedBaseline).
   */
  baselineSeeds?: Record<string, StoredBaseline>;
  /** Our chat probes' own token rate against the inter-token latency objective (reduce/objectives.ts onProbeRate). */
  probeObjective?: ObjectiveMemory;
  /** What the node told us: the engine's processes, GPUs, ranks and stacks (core/node-memory.ts). */
  node?: NodeMemory;
  /** Latency windows per slot, episodes far outside them, requests the engines never reported (issue 41). */
  progress?: TargetProgress;
  /** Abort lines discounted as our own probes' (timed out or cut by the watchdog itself). */
  ownAborts?: number;
  /** When our own completion probes timed out (each one aborted at the engines), newest last, bounded. */
  ownCuts?: number[];
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
  | {
      type: 'critical_log';
      at: number;
      service: string;
      rule: string;
      diagnosis: string;
      line: string;
      rootCause?: string;
      absorbed?: number;
      /** The incident's members as `rule@line`, at most a few (the event's own first). */
      members?: string[];
    }
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
  | { type: 'node'; at: number; service: string; what: NodeEventKind; text: string }
  | {
      type: 'engine_crawling';
      at: number;
      service: string;
      rank?: string;
      running: number;
      ratio: number;
      sinceMs: number;
    }
  | {
      type: 'rank_stalled';
      at: number;
      service: string;
      rank: string;
      running: number;
      sinceMs: number;
    };

export interface Step {
  state: TargetMemory;
  actions: Action[];
  events: DetectEvent[];
  transition?: Transition;
  /**
   * Unix ms at which the verdict may change with no new signal (a pending critical line's confirmation deadline):
   * the shell feeds a tick then, not only on its periodic one.
   */
  wakeAt?: number;
}

export function initialState(target: string, now: number): TargetMemory {
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
