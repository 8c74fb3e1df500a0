import type { LogPack, RuleConfig } from '../../../config/schema.js';
import type { Severity } from '../../../core/signals.js';
import type { LoggerName } from '../loggers.js';
import type { Carrier } from '../carriers.js';
import { LOG_EVENT_CLASSES, type LogEventClass, type RuleClass } from '../../../core/vocabulary.js';

/** Periodic engine lines a pack turns into engine gauges (see ../engine-lines.ts). */
export type EngineLineKind = 'sglang_batch' | 'vllm_stats';

/**
 * What a built-in rule's event means, as a bounded label: the vocabulary's log event classes
 * (src/core/vocabulary.ts) minus `custom`, which only user rules take.
 */
export const RULE_CLASSES = (Object.keys(LOG_EVENT_CLASSES) as LogEventClass[]).filter(
  (c): c is RuleClass => c !== 'custom',
);
export type { RuleClass };

/** A built-in rule: a user-rule shape plus what the pack knows about it. */
export interface PackRule extends RuleConfig {
  class: RuleClass;
  /** Upstream file(s) and the versions the wording applies to (also said in a comment next to the rule). */
  upstream: string;
  /**
   * Rules sharing a key describe one incident: a multi-line record of that key absorbs the others' matches on
   * its own lines (a thread-death record and the GUARD assertion that ends it are one event).
   */
  incident?: string;
  /**
   * Named group holding the request id: per-rank copies of one request's line (TP0..TP7) count once.
   */
  perRequest?: string;
  /**
   * A multi-line rule whose header alone is decisive: when the closing line never comes (the window ran out,
   * or the input ended or went idle) the event is still raised, with the header's fields.
   */
  emitUnclosed?: boolean;
  /**
   * Data-dependent classes: the first entry whose `match` finds a text in one of the event's fields `in`
   * (`$line`: the matched text) gives the event its class instead of `class`. The pack decides what a line
   * means, so the core keys on the class alone (a generic thread death whose thread is the bootstrap thread).
   */
  classWhen?: readonly { class: RuleClass; in: readonly string[]; match: string }[];
  /**
   * The engine logger that prints the message (loggers.ts): the match must follow that logger's record prefix
   * (or be the message of a structured record), so the same words on a continuation line (user text the engine
   * printed raw) match nothing. Rules for stderr output (threading.excepthook, torch C++) name none.
   */
  logger?: LoggerName;
  /**
   * Which open incident of its key a line joins: any of the service's (`service`, the default: a dying
   * engine's chain crosses its processes) or only one its own process or rank prefix opened (`process`).
   */
  incidentScope?: 'service' | 'process';
  /** Severity of the loop event (one request's line repeated past the loop limit); default the rule's. */
  loopSeverity?: Severity;
  /** The engine (re)started: every open incident of the service ends, the next death is a new one. */
  startup?: true;
  /**
   * A shape any engine prints (issue 40: a CUDA error, a C++ abort, a signal): on a line an engine's own rule
   * matched it adds nothing (the specific rule's event or member stands for the line), elsewhere it is a rule like
   * any other. The generic packs come last in LOG_PACKS, so the specific rules of a line are tried first.
   */
  generic?: true;
  /**
   * A multi-line record's closing line, with two refinements over a user rule's: `after` — lines count as closing
   * only once a line matching it was seen (the current thread's block of a CPython fatal-error dump); `first` — the
   * record closes on its first closing line (the innermost frame, a panic's message) instead of its chain's last.
   */
  follows?: { match: string; within: number; after?: string; first?: true };
}

export interface RulePack {
  name: LogPack;
  rules: PackRule[];
  engineLines: EngineLineKind[];
  /**
   * Records of this engine that carry user text raw over lines of their own (../carriers.ts): no built-in rule sees
   * their lines. Declared with the pack whose engine prints them; the matcher shields them whatever packs run.
   */
  carriers?: readonly Carrier[];
}
