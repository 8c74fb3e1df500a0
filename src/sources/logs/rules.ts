// Rules: compiled once per log source (built-in packs + user rules), matched line by line. A combined
// literal prefilter (one regex, built as a trie of the literals every match must contain) lets the chunk
// scanner skip the ~99.9% of lines no rule can match without looking at them one by one.
import type { EngineGauge, LogPack, RuleConfig } from '../../config/schema.js';
import type { LogEventClass, Severity } from '../../core/signals.js';
import type { EngineValues } from './engine-lines.js';
import { literalAvoidsBatchLines } from './batch-lines.js';
import { PACKS, type EngineLineKind, type PackRule } from './packs/index.js';
import { requiredLiterals } from '../../lib/regex.js';
import { ruleProblems } from '../../config/rule-problems.js';
import { CARRIERS, OpenCarrier } from './carriers.js';
import { isRequestEcho, prefixAllows, prefixShape } from './request-echo.js';
import { LOGGERS, processKey, type EngineLogger } from './loggers.js';
import { stampText, stampToMs } from './line-time.js';

export interface CompiledRule {
  name: string;
  /** The rule's class (the `class` metric label alerts select on). */
  class: LogEventClass;
  /** Classes that replace `class` when an event's fields say so (PackRule.classWhen). */
  classWhen?: { class: LogEventClass; in: readonly string[]; re: RegExp }[];
  severity: Severity;
  re: RegExp;
  /** At least one of these occurs in every matching line; null = the rule must see every line. */
  literals: string[] | null;
  extract: [group: string, gauge: EngineGauge][];
  /** A user rule (config), not a built-in pack rule. */
  user: boolean;
  /** Rules sharing a key describe one incident (see PackRule.incident). */
  incident?: string;
  /** Named group holding the request id: per-rank copies of one request's line count once. */
  perRequest?: string;
  /** Multi-line rule raised with the header's fields when no closing line comes. */
  emitUnclosed?: boolean;
  follows?: { re: RegExp; within: number };
  /** The logger whose record prefix must come right before a match (PackRule.logger). */
  logger?: EngineLogger;
  incidentScope?: 'service' | 'process';
  loopSeverity?: Severity;
  startup?: true;
}

export interface RuleSet {
  rules: CompiledRule[];
  /** Global regex over latin1 chunk text finding every line that may match some rule. */
  prefilter: RegExp | null;
  /** Some rule has no literal: every line must be matched. */
  everyLine: boolean;
  /** No rule can match an SGLang batch line: the scanner skips them (see batch-lines.ts). */
  skipBatchLines: boolean;
  /** Only built-in rules: a request-echo line can match none (see request-echo.ts), the scanner may skip it. */
  skipRequestEchoes: boolean;
  /** The prefilter without the global flag, for testing one line. */
  linePrefilter: RegExp | null;
  engineLines: EngineLineKind[];
}

/** One match folded into an incident: what the incident's event lists as its members. */
export interface IncidentMember {
  rule: string;
  /** 1-based line number of the member's (first) line. */
  lineNo: number;
  /** Unix ms of the line (its own stamp, the last stamp before it, or the read time). */
  time: number;
  /** The member's first line, capped at MEMBER_LINE_KEEP characters. */
  line: string;
  /** The process or rank prefix of the line (loggers.ts processKey), '' when it names none. */
  process: string;
}

/**
 * The lines of one incident (rules sharing an incident key within the time window): the event is raised once, for
 * the first decisive member, and this object grows while the incident is open (members, absorbed, root cause), so
 * whatever keeps the event (replay, the bundle, the status page's events) shows the whole chain.
 */
export interface Incident {
  key: string;
  /** The first MAX_MEMBERS members, the event's own first. */
  members: IncidentMember[];
  /** Members beyond the event's own (every one counted, kept or not). */
  absorbed: number;
  /** The final exception of the last traceback in the chain: `RuntimeError`, `CUDA error: …`. */
  rootCause?: { exception: string; message: string; rule: string };
  /** Fields of the members, the event's own first, then the others' in order (a traceback's exception last wins). */
  fields: Record<string, string>;
  start: number;
  last: number;
}

export interface RuleMatch {
  rule: CompiledRule;
  /** The event's severity: the rule's, or its loopSeverity for a loop event. */
  severity: Severity;
  /** Unix ms of the (first) line: its own stamp, the last stamp before it, or the read time (MatcherOptions.timeOf). */
  time: number;
  /** The incident this event stands for (rules with an incident key). */
  incident?: Incident;
  /** One request's line repeated more than loopCount times within loopWindowMs: this event is the loop. */
  loop?: { count: number; seconds: number };
  /** The matched line; for `follows` rules the header and the closing line joined with \n. */
  line: string;
  /** Byte offset of the (first) line in its file. */
  offset: number;
  /** 1-based number of the (first) line, counted from where the scanner started. */
  lineNo: number;
  fields: Record<string, string>;
  values?: EngineValues;
}

/** The class an event of this match carries: the rule's, unless a `classWhen` entry matches its fields. */
export function eventClass(m: Pick<RuleMatch, 'rule' | 'line' | 'fields'>): LogEventClass {
  for (const w of m.rule.classWhen ?? []) {
    const texts = w.in.map((f) => (f === '$line' ? m.line : m.fields[f]));
    if (texts.some((t) => t !== undefined && w.re.test(t))) return w.class;
  }
  return m.rule.class;
}

/** Every class a rule's events can carry (the label sets to pre-create). */
export const ruleClasses = (r: CompiledRule): LogEventClass[] => [
  r.class,
  ...(r.classWhen ?? []).map((w) => w.class).filter((c) => c !== r.class),
];

export class RuleError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
    this.name = 'RuleError';
  }
}

// The literal as the chunk scanner sees it: chunks are decoded as latin1 (one char per byte), so a
// non-ASCII literal is searched for as its UTF-8 bytes.
const asBytes = (s: string) => Buffer.from(s, 'utf8').toString('latin1');

// Leading/trailing punctuation and spaces make poor first characters for the prefilter (V8 then tries
// nearly every position); trimming keeps the literal a substring of the match.
function trimLiteral(s: string): string {
  return s.replace(/^[^A-Za-z]+/, '').replace(/[^A-Za-z0-9_]+$/, '');
}

function compileOne(rule: RuleConfig | PackRule, user: boolean): CompiledRule {
  if (user) {
    const problems = ruleProblems(rule);
    if (problems.length > 0) throw new RuleError(problems.map((p) => `rule ${rule.name}: ${p}`));
  }
  const lits = requiredLiterals(rule.match)?.map(trimLiteral) ?? null;
  const compiled: CompiledRule = {
    name: rule.name,
    // Config parsing defaults it; a rule object built in code without one is custom too.
    class: rule.class ?? 'custom',
    ...('classWhen' in rule && rule.classWhen !== undefined
      ? { classWhen: rule.classWhen.map((w) => ({ class: w.class, in: w.in, re: new RegExp(w.match) })) }
      : {}),
    severity: rule.severity,
    re: userRegExp(rule.match, user),
    literals: lits === null || lits.some((l) => l.length < 3) ? null : lits,
    extract: Object.entries(rule.extract ?? {}),
    user,
  };
  if (!user) {
    const p = rule as PackRule;
    if (p.incident !== undefined) compiled.incident = p.incident;
    if (p.perRequest !== undefined) compiled.perRequest = p.perRequest;
    if (p.emitUnclosed === true) compiled.emitUnclosed = true;
    if (p.logger !== undefined) compiled.logger = LOGGERS[p.logger];
    if (p.incidentScope !== undefined) compiled.incidentScope = p.incidentScope;
    if (p.loopSeverity !== undefined) compiled.loopSeverity = p.loopSeverity;
    if (p.startup === true) compiled.startup = true;
  }
  if (rule.follows)
    compiled.follows = { re: userRegExp(rule.follows.match, user), within: rule.follows.within };
  return compiled;
}

/**
 * Characters of a line a user rule looks at: its first USER_RULE_MAX_CHARS. The linear engine is linear with a
 * large constant (~0.3 µs a character), so a 64 KB prompt would still cost ~20 ms a rule; capped, at most ~3 ms.
 */
export const USER_RULE_MAX_CHARS = 8192;

/**
 * A user pattern runs on V8's linear-time engine (the `l` flag; regex.ts enables it and validateUserPattern
 * refuses what it cannot run). Backtracking is exponential or quadratic for common patterns such as
 * `(?<msg>.*) failed after (?<n>\d+) retries` (issue 24: 12.3 s for five 64 KB prompts), and V8's fallback on
 * excessive backtracks does not catch the quadratic case: each start position stays under its threshold.
 * Built-in patterns are ours, tested linear on the backtracking engine (test/logs/rule-linearity.test.ts).
 */
function userRegExp(source: string, user: boolean): RegExp {
  // eslint-disable-next-line no-invalid-regexp -- `l` (linear) exists once regex.ts has set the V8 flag
  return user ? new RegExp(source, 'l') : new RegExp(source);
}

/** The part of a line a rule is run on. */
const forRule = (rule: CompiledRule, line: string) =>
  rule.user && line.length > USER_RULE_MAX_CHARS ? line.slice(0, USER_RULE_MAX_CHARS) : line;

/** escapeRegExp of one character, without a regex replace per trie node (thousands at every start). */
const escapeChar = (ch: string): string => (REGEX_SPECIAL.has(ch) ? `\\${ch}` : ch);
const REGEX_SPECIAL = new Set([...'.*+?^${}()|[]\\']);

/** A regex alternation written as a trie, so V8 tests each position against few first characters. */
function trieRegex(words: string[]): string {
  interface Node {
    end: boolean;
    next: Map<string, Node>;
  }
  const root: Node = { end: false, next: new Map() };
  for (const w of words) {
    let n = root;
    for (const ch of w) {
      let c = n.next.get(ch);
      if (!c) n.next.set(ch, (c = { end: false, next: new Map() }));
      n = c;
    }
    n.end = true;
  }
  const emit = (n: Node): string => {
    if (n.end) return ''; // a shorter literal already suffices
    const alts = [...n.next].map(([ch, c]) => escapeChar(ch) + emit(c));
    return alts.length === 1 ? alts[0]! : `(?:${alts.join('|')})`;
  };
  return emit(root);
}

export function compileRuleSet(
  packs: readonly LogPack[],
  userRules: readonly RuleConfig[],
  service?: string,
): RuleSet {
  const rules: CompiledRule[] = [];
  const engineLines = new Set<EngineLineKind>();
  // Pack order is fixed (LOG_PACKS), whatever the config lists: the specific thread-death record (nixl) must
  // come before the generic one (python) so it wins the header they share.
  // PACKS lists them in LOG_PACKS order; read from there so replay need not load the config schema (zod).
  for (const p of (Object.keys(PACKS) as LogPack[]).filter((x) => packs.includes(x))) {
    const pack = PACKS[p];
    for (const r of pack.rules) rules.push(compileOne(r, false));
    for (const k of pack.engineLines) engineLines.add(k);
  }
  const problems: string[] = [];
  for (const r of userRules) {
    if (service !== undefined && r.services !== undefined && !r.services.includes(service)) continue;
    try {
      rules.push(compileOne(r, true));
    } catch (err) {
      if (err instanceof RuleError) problems.push(...err.problems);
      else throw err;
    }
  }
  if (problems.length > 0) throw new RuleError(problems);
  const everyLine = rules.some((r) => r.literals === null);
  // A carrier's header must reach the matcher, or the lines after it would be scanned as the engine's own.
  const carrierLiterals = rules.some((r) => !r.user) ? CARRIERS.map((c) => trimLiteral(c.literal)) : [];
  const literals = [...new Set([...rules.flatMap((r) => r.literals ?? []), ...carrierLiterals].map(asBytes))];
  const prefilter = !everyLine && literals.length > 0 ? new RegExp(trieRegex(literals), 'g') : null;
  const skipBatchLines =
    prefilter !== null &&
    rules.every((r) => r.literals !== null && r.literals.every((l) => literalAvoidsBatchLines(l, !r.user)));
  return {
    rules,
    prefilter,
    everyLine,
    skipBatchLines,
    skipRequestEchoes: rules.every((r) => !r.user),
    linePrefilter: prefilter && new RegExp(prefilter.source),
    engineLines: [...engineLines],
  };
}

interface Pending {
  rule: CompiledRule;
  line: string;
  offset: number;
  lineNo: number;
  time: number;
  fields: Record<string, string>;
  left: number;
  /** The header's prefix shape: the closing line must carry the same prefix (see request-echo.ts). */
  shape: string;
  /** The header's logger prefix ('' for none): an unprefixed line continues its record (loggers.ts). */
  continues: boolean;
  /** Length of the header's prefix: a line of the record is read without it for the chain markers. */
  prefixLen: number;
  /** The last exception line seen (a chained traceback goes on past it), with its fields. */
  closing?: { line: string; fields: Record<string, string> };
  /** A chain marker followed the last exception line: another traceback is being printed. */
  chained: boolean;
  incident?: Incident;
  /** The header joined an incident already raised: the record is one of its members, not its event. */
  joined: boolean;
}

function groupsOf(m: RegExpExecArray, into: Record<string, string>): Record<string, string> {
  if (m.groups) for (const [k, v] of Object.entries(m.groups)) if (v !== undefined) into[k] = v;
  return into;
}

/** How long after an incident's last member a line of the same incident still belongs to it. */
export const INCIDENT_WINDOW_MS = 30_000;
/** One request's line again within this long is the same event (TP0..TP7 print it together). */
export const REQUEST_WINDOW_MS = 5_000;
/** More than LOOP_COUNT copies of one request's line from one process within LOOP_WINDOW_MS is a loop. */
export const LOOP_COUNT = 20;
export const LOOP_WINDOW_MS = 10_000;
/** Request ids remembered for per-request de-duplication (oldest forgotten first). */
const PER_REQUEST_KEEP = 4096;
/** Members an incident keeps (each one is counted, kept or not). */
export const MAX_MEMBERS = 20;
const MEMBER_LINE_KEEP = 300;
/** Open incidents kept per matcher (keys are pack incident keys, times process prefixes: few). */
const MAX_INCIDENTS = 256;
/**
 * Lines a chain head without a root cause (`Subprocess … crashed`, printed by another process before the dying one's
 * traceback) waits for a traceback record of its incident to begin; the record then runs to its own end. Past it, or
 * when the input ends or goes quiet (finish), the event goes out as it is.
 */
export const ROOT_CAUSE_WAIT_LINES = 50;

// Between a traceback's exception line and the next traceback of a chain (CPython Lib/traceback.py
// _cause_message / _context_message, 3.0 → 3.13): the record goes on to the chain's last exception.
const CHAIN_MARKER =
  /^\s*$|During handling of the above exception, another exception occurred:|The above exception was the direct cause of the following exception:|Traceback \(most recent call last\):|^\s*\+[-=]+/;

export interface MatcherOptions {
  /**
   * Unix ms of a line the matcher needs the time of (an event, an incident member): the caller knows the runtime's
   * stamp, the read time and the stamps of lines the prefilter skipped. `text` is the line, or the time field of
   * the structured record it is part of. Default: the line's own stamp (line-time.ts),
   * else the last stamp this matcher saw, else now().
   */
  timeOf?: (text: string, offset: number) => number;
  now?: () => number;
  incidentWindowMs?: number;
  requestWindowMs?: number;
  loopCount?: number;
  loopWindowMs?: number;
  /** A match folded into an open incident (counted per rule; no event). */
  onMember?: (m: RuleMatch) => void;
}

interface RequestSeen {
  /** When the last event for this request was raised. */
  raised: number;
  loopStart: number;
  loopCount: number;
  looped: boolean;
}

/**
 * Matches decoded lines of one file against a rule set, holding the state of multi-line rules.
 * Lines arrive in file order; `hasPending` tells the scanner it must show every line for a while.
 * One incident makes one event: rules sharing an incident key within INCIDENT_WINDOW_MS of its last member are
 * members of it (counted, listed, never another event); a traceback record closes on its chain's last exception
 * line, which is the incident's root cause; one request's line within REQUEST_WINDOW_MS is one event, and more than
 * LOOP_COUNT copies of it within LOOP_WINDOW_MS are a loop event. A start-up line ends every open incident.
 */
export class LineMatcher {
  private pending: Pending[] = [];
  /** Open incidents by scope key (incident key, plus the process prefix for process-scoped rules). */
  private incidents = new Map<string, Incident>();
  /** The first absorbed member of an incident whose record (the event to be) is still open. */
  private heldFirst = new Map<Incident, RuleMatch>();
  private seenRequests = new Map<string, RequestSeen>();
  private calls = 0;
  /** A record carrying user text (carriers.ts) is open: built-in rules see none of its lines. */
  private carrier: OpenCarrier | undefined;
  /** The carrier this line opened (its header: the rules it `raises` may match it), else undefined. */
  private header: OpenCarrier | undefined;
  /** The rule set has built-in rules (carriers only shield those). */
  private readonly builtIn: boolean;
  private readonly timeOf: (line: string, offset: number) => number;
  private readonly window: number;
  private readonly requestWindow: number;
  private readonly loopCount: number;
  private readonly loopWindow: number;
  private lastStampMs = NaN;
  private readonly literals: LiteralIndex;
  /** Incident keys a traceback record (a `follows` rule whose header alone is decisive) can give a root cause. */
  private readonly recordKeys: Set<string>;
  /**
   * Events not given to the caller yet, in file order: a chain head waiting (`wait` lines left) for the traceback
   * that names its root cause, and every event after it, so the order of events stays the order of lines.
   */
  private outbox: { m: RuleMatch; wait: number }[] = [];

  constructor(
    readonly set: RuleSet,
    private readonly o: MatcherOptions = {},
  ) {
    this.literals = new LiteralIndex(set.rules);
    this.builtIn = set.rules.some((r) => !r.user);
    this.recordKeys = new Set(
      set.rules.flatMap((r) => (r.follows && r.emitUnclosed && r.incident !== undefined ? [r.incident] : [])),
    );
    const now = o.now ?? Date.now;
    this.timeOf = o.timeOf ?? ((line) => this.ownTime(line, now));
    this.window = o.incidentWindowMs ?? INCIDENT_WINDOW_MS;
    this.requestWindow = o.requestWindowMs ?? REQUEST_WINDOW_MS;
    this.loopCount = o.loopCount ?? LOOP_COUNT;
    this.loopWindow = o.loopWindowMs ?? LOOP_WINDOW_MS;
  }

  /** The default clock: the line's stamp (zoneless as UTC), else the last one seen, else now. */
  private ownTime(line: string, now: () => number): number {
    const stamp = stampText(line);
    if (stamp !== undefined) {
      const t = stampToMs(stamp, new Date(now()).getUTCFullYear(), true);
      if (Number.isFinite(t)) return (this.lastStampMs = t);
    }
    return Number.isFinite(this.lastStampMs) ? this.lastStampMs : now();
  }

  get hasPending(): boolean {
    // An open carrier must see every line, or it could not tell where it ends.
    return this.pending.length > 0 || this.carrier !== undefined || this.outbox.length > 0;
  }

  /**
   * Offset of the first line whose event is not out yet: a record still open that may become an event, a member
   * held back for one, or an event in the outbox (a chain head waiting for its root cause, and those behind it).
   * A saved read position must not pass it: a restart after kill -9 reads from there and raises it then. Undefined
   * when nothing is held. A record that joined an incident already raised is left out: it makes no event.
   */
  get heldFrom(): number | undefined {
    let from = Infinity;
    for (const p of this.pending) if (!p.joined && p.offset < from) from = p.offset;
    for (const m of this.heldFirst.values()) if (m.offset < from) from = m.offset;
    for (const o of this.outbox) if (o.m.offset < from) from = o.m.offset;
    return from === Infinity ? undefined : from;
  }

  reset(): void {
    this.carrier = undefined;
    this.outbox = [];
    this.pending = [];
    this.incidents.clear();
    this.heldFirst.clear();
    this.seenRequests.clear();
  }

  /**
   * `lineNo` counts every line of the file (the scanner knows it); without it, lines matched so far. `rec` says the
   * line is a line of a structured record's message (formats/structured.ts): its first line (`head`) is a logger's
   * record, prefix or not; `time` is the record's own time field.
   */
  match(
    line: string,
    offset: number,
    emit: (m: RuleMatch) => void,
    lineNo = ++this.calls,
    rec?: { head: boolean; time?: string },
  ): void {
    // A line went by: a waiting chain head with no record of its incident open counts it.
    for (const o of this.outbox) if (o.wait > 0 && !this.recordOpen(o.m.incident!)) o.wait--;
    this.matchLine(line, offset, (m) => this.send(m, emit), lineNo, rec);
    this.releaseOutbox(emit);
  }

  /** An event out, unless one before it still waits (then it queues behind it). */
  private send(m: RuleMatch, emit: (m: RuleMatch) => void, wait = 0): void {
    if (this.outbox.length > 0 || wait > 0) this.outbox.push({ m, wait });
    else emit(m);
  }

  /** Hands out the queued events up to the first that still waits for its root cause. */
  private releaseOutbox(emit: (m: RuleMatch) => void, all = false): void {
    while (this.outbox.length > 0) {
      const o = this.outbox[0]!;
      if (!all && o.wait > 0 && o.m.incident!.rootCause === undefined) return;
      this.outbox.shift();
      emit(o.m);
    }
  }

  private recordOpen(inc: Incident): boolean {
    return this.pending.some((p) => p.incident === inc);
  }

  private matchLine(
    line: string,
    offset: number,
    emit: (m: RuleMatch) => void,
    lineNo: number,
    rec?: { head: boolean; time?: string },
  ): void {
    const record = rec?.head === true;
    const carried = this.builtIn && this.carried(line);
    const closed =
      this.pending.length > 0 ? this.advancePending(line, offset, lineNo, emit, carried) : undefined;
    // A structured record's later lines are its message's continuation: they may close a record the head opened,
    // never open one (user text in a message, a prompt with raw newlines, is not the engine's output).
    if (rec !== undefined && !rec.head) return;
    let echo: boolean | undefined;
    let time: number | undefined;
    // Only the rules whose literals the line holds, in rule order: walking every rule to ask was a tenth of the
    // matcher's time on a line (a hundred-odd rules, a handful of candidates).
    const order = this.literals.list(line);
    const rules = this.set.rules;
    for (let k = 0; k < order.length; k++) {
      const rule = rules[order[k]!]!;
      if (carried && !rule.user && this.header?.carrier.raises?.includes(rule.name) !== true) continue;
      const m = rule.re.exec(forRule(rule, line));
      if (!m) continue;
      if (carried && !rule.user) {
        // On a carrier's header the rule sees the engine's words only: it ends where the user text may begin, or
        // it ends the line (a message with no user text in it).
        const end = m.index + m[0].length;
        if (end > this.header!.userFrom && line.slice(end).trim() !== '') continue;
      }
      if (!rule.user) {
        echo ??= isRequestEcho(line);
        if (echo || !prefixAllows(line, m.index)) continue;
        if (rule.logger && !record && !rule.logger.prefix.test(line.slice(0, m.index))) continue;
      }
      // The record that took this line as its exception line is its event (the GUARD assertion ends the thread death).
      if (rule.incident !== undefined && closed?.has(rule.incident)) continue;
      time ??= this.timeOf(rec?.time ?? line, offset);
      const fields = groupsOf(m, {});
      if (rule.startup) {
        // A marker, not an event (healthy logs print it at every start): counted as a match, it ends the incidents.
        this.endIncidents();
        this.o.onMember?.({ rule, severity: rule.severity, time, line, offset, lineNo, fields });
        continue;
      }
      const scope = rule.incident === undefined ? undefined : this.scopeKey(rule, line);
      if (rule.follows) {
        // A new header restarts the rule: the previous thread's traceback ended without a match.
        this.dropPending(rule, emit);
        const prefix = line.slice(0, m.index);
        const p: Pending = {
          rule,
          line,
          offset,
          lineNo,
          time,
          fields,
          left: rule.follows.within,
          shape: prefixShape(prefix),
          prefixLen: prefix.length,
          continues: rule.logger?.continuation === 'unprefixed' && !record,
          chained: false,
          joined: false,
        };
        if (scope !== undefined) {
          // A header whose record alone is decisive joins an open incident; a thread death's record always opens
          // its own (a second thread dying is a second incident, however close).
          const open = rule.emitUnclosed ? this.openIncident(scope, time) : undefined;
          if (open) {
            p.incident = open;
            p.joined = true;
            this.addMember(open, rule, line, lineNo, time, fields);
          } else {
            p.incident = this.newIncident(scope, rule, line, lineNo, time, fields);
            this.heldFirst.delete(p.incident);
          }
        }
        this.pending.push(p);
        continue;
      }
      const out: RuleMatch = { rule, severity: rule.severity, time, line, offset, lineNo, fields };
      const values = extractValues(rule, fields);
      if (values) out.values = values;
      if (scope !== undefined) {
        const open = this.openIncident(scope, time);
        if (open) {
          this.addMember(open, rule, line, lineNo, time, fields);
          out.incident = open;
          // Held back while the record that will be the event is open: if it never closes, this is the event.
          if (this.pending.some((p) => p.incident === open && !p.joined) && !this.heldFirst.has(open))
            this.heldFirst.set(open, out);
          this.o.onMember?.(out);
          continue;
        }
        out.incident = this.newIncident(scope, rule, line, lineNo, time, fields);
      }
      if (rule.perRequest !== undefined) {
        const r = this.forRequest(rule, fields, line, time);
        if (r === 'loop') {
          out.severity = rule.loopSeverity ?? rule.severity;
          out.loop = { count: this.loopCount + 1, seconds: this.loopWindow / 1000 };
        } else if (r === 'repeat') {
          this.o.onMember?.(out);
          continue;
        }
      }
      // A chain head printed before the dying process's traceback (issue 27): its event waits a few lines for the
      // traceback record that will join its incident, so whoever keeps the event (journal, evidence, alert cause)
      // gets the root cause with it. The matcher's callers see the event late by those lines, never without it.
      const waits =
        out.incident !== undefined &&
        out.incident.rootCause === undefined &&
        this.recordKeys.has(rule.incident!);
      if (waits) this.send(out, emit, ROOT_CAUSE_WAIT_LINES);
      else emit(out);
    }
  }

  private scopeKey(rule: CompiledRule, line: string): string {
    return rule.incidentScope === 'process' ? `${rule.incident}\u0000${processKey(line)}` : rule.incident!;
  }

  /** The incident open under `scope` at `time`, if its last member is within the window. */
  private openIncident(scope: string, time: number): Incident | undefined {
    const inc = this.incidents.get(scope);
    if (inc === undefined) return undefined;
    if (time - inc.last > this.window || time < inc.start - this.window) {
      this.incidents.delete(scope);
      return undefined;
    }
    return inc;
  }

  private newIncident(
    scope: string,
    rule: CompiledRule,
    line: string,
    lineNo: number,
    time: number,
    fields: Record<string, string>,
  ): Incident {
    const inc: Incident = {
      key: rule.incident!,
      members: [member(rule, line, lineNo, time)],
      absorbed: 0,
      fields: { ...fields },
      start: time,
      last: time,
    };
    setRootCause(inc, rule, fields);
    this.incidents.delete(scope);
    this.incidents.set(scope, inc);
    if (this.incidents.size > MAX_INCIDENTS) this.incidents.delete(this.incidents.keys().next().value!);
    return inc;
  }

  private addMember(
    inc: Incident,
    rule: CompiledRule,
    line: string,
    lineNo: number,
    time: number,
    fields: Record<string, string>,
  ): void {
    inc.absorbed++;
    if (inc.members.length < MAX_MEMBERS) inc.members.push(member(rule, line, lineNo, time));
    inc.last = Math.max(inc.last, time);
    for (const [k, v] of Object.entries(fields)) if (!(k in inc.fields)) inc.fields[k] = v;
    setRootCause(inc, rule, fields);
  }

  /** A start-up line (the server ready, a new engine): the deaths before it are over. */
  private endIncidents(): void {
    this.incidents.clear();
  }

  /** Whether the line is user text of a carrier record (an open one, or one this line opens). */
  private carried(line: string): boolean {
    this.header = undefined;
    if (this.carrier) {
      if (this.carrier.takes(line)) return true;
      this.carrier = undefined;
    }
    const opened = OpenCarrier.open(line);
    if (!opened) return false;
    if (!opened.closed) this.carrier = opened;
    this.header = opened;
    return true;
  }

  /**
   * The input ended or went idle: records that saw their exception line close on it, records whose header alone
   * is decisive are raised now (an engine that died may never write the rest); the others keep waiting.
   */
  finish(emit: (m: RuleMatch) => void): void {
    const keep: Pending[] = [];
    const send = (m: RuleMatch) => this.send(m, emit);
    for (const p of this.pending) {
      if (p.closing) this.close(p, send);
      else if (p.rule.emitUnclosed) this.emitHeader(p, send);
      else keep.push(p);
    }
    this.pending = keep;
    // Quiet or ended: no traceback is coming, a waiting chain head goes out as it is.
    this.releaseOutbox(emit, true);
  }

  /** A header of `rule` restarts it: the open record ends as it would have on running out of lines. */
  private dropPending(rule: CompiledRule, emit: (m: RuleMatch) => void): void {
    const keep: Pending[] = [];
    for (const p of this.pending) {
      if (p.rule !== rule) keep.push(p);
      else this.expire(p, emit);
    }
    this.pending = keep;
  }

  /** A record ended without a closing line after its exception: raised on what it has, or let go. */
  private expire(p: Pending, emit: (m: RuleMatch) => void): void {
    if (p.closing) this.close(p, emit);
    else if (p.rule.emitUnclosed) this.emitHeader(p, emit);
    else this.release(p, emit);
  }

  /** A record that will not be an event: a member it held back is the incident's event instead. */
  private release(p: Pending, emit: (m: RuleMatch) => void): void {
    if (p.incident === undefined) return;
    const held = this.heldFirst.get(p.incident);
    this.heldFirst.delete(p.incident);
    if (held) emit(held);
  }

  private emitHeader(p: Pending, emit: (m: RuleMatch) => void): void {
    this.heldFirst.delete(p.incident!);
    if (p.joined) return;
    emit({
      rule: p.rule,
      severity: p.rule.severity,
      time: p.time,
      line: p.line,
      offset: p.offset,
      lineNo: p.lineNo,
      fields: p.fields,
      ...(p.incident ? { incident: p.incident } : {}),
    });
  }

  private close(p: Pending, emit: (m: RuleMatch) => void): void {
    const c = p.closing!;
    const fields = { ...p.fields, ...c.fields };
    if (p.incident) {
      for (const [k, v] of Object.entries(c.fields)) p.incident.fields[k] = v;
      setRootCause(p.incident, p.rule, c.fields, true);
      this.heldFirst.delete(p.incident);
    }
    // A record that joined an open incident is one of its members: the incident's event is already out.
    if (p.joined) return;
    const out: RuleMatch = {
      rule: p.rule,
      severity: p.rule.severity,
      time: p.time,
      line: `${p.line}\n${c.line}`,
      offset: p.offset,
      lineNo: p.lineNo,
      fields,
    };
    if (p.incident) out.incident = p.incident;
    const values = extractValues(p.rule, fields);
    if (values) out.values = values;
    emit(out);
  }

  /** 'first' (raise it), 'repeat' (within REQUEST_WINDOW_MS of the last event) or 'loop' (its loop event). */
  private forRequest(
    rule: CompiledRule,
    fields: Record<string, string>,
    line: string,
    time: number,
  ): 'first' | 'repeat' | 'loop' {
    const id = fields[rule.perRequest!];
    if (id === undefined || id === '') return 'first';
    const key = `${rule.name}\u0000${id}`;
    const seen = this.seenRequests.get(key);
    // Loops are counted per process: eight ranks printing one line together are one line, not eight.
    // SGLang's per-request lines name their TP rank (`rank=N`): no need to read the prefix for it.
    const loopKey = `${key}\u0000${fields.rank ?? processKey(line)}`;
    const loop = this.seenRequests.get(loopKey);
    if (loop === undefined || time - loop.loopStart > this.loopWindow) {
      this.remember(loopKey, { raised: time, loopStart: time, loopCount: 1, looped: false });
    } else if (++loop.loopCount > this.loopCount && !loop.looped) {
      loop.looped = true;
      return 'loop';
    }
    if (seen !== undefined && time - seen.raised <= this.requestWindow && time >= seen.raised)
      return 'repeat';
    this.remember(key, { raised: time, loopStart: time, loopCount: 1, looped: false });
    return 'first';
  }

  private remember(key: string, v: RequestSeen): void {
    this.seenRequests.delete(key);
    this.seenRequests.set(key, v);
    if (this.seenRequests.size > PER_REQUEST_KEEP) {
      this.seenRequests.delete(this.seenRequests.keys().next().value!);
    }
  }

  /** Advances open records over one line; returns the incidents whose record took this line as its exception. */
  private advancePending(
    line: string,
    offset: number,
    lineNo: number,
    emit: (m: RuleMatch) => void,
    carried: boolean,
  ): Set<string> | undefined {
    let closed: Set<string> | undefined;
    const keep: Pending[] = [];
    // Records that took this line, by header: the first (most specific) record of an incident wins its header.
    const won = new Set<string>();
    for (const p of this.pending) {
      // User text is not a line of an engine's record: it neither closes one nor counts against `within`.
      if (carried && !p.rule.user) {
        keep.push(p);
        continue;
      }
      const headerKey = `${p.rule.incident ?? p.rule.name}\u0000${p.offset}`;
      if (won.has(headerKey)) continue;
      const m = p.rule.follows!.re.exec(forRule(p.rule, line));
      const prefix = m ? line.slice(0, m.index) : '';
      const ours =
        m !== null && (prefixShape(prefix) === p.shape || (p.continues && this.continuation(p, line)));
      if (ours) {
        // An exception line: the record's end unless a chained traceback follows (then its last line is).
        won.add(headerKey);
        p.closing = { line, fields: groupsOf(m, {}) };
        p.chained = false;
        if (p.rule.incident !== undefined) (closed ??= new Set()).add(p.rule.incident);
        if (--p.left > 0) keep.push(p);
        else this.close(p, emit);
        continue;
      }
      const marker = p.closing !== undefined && CHAIN_MARKER.test(bodyOf(p, line));
      if (p.closing && !p.chained && !marker) {
        // The line after the last exception line is not a chain: the record ended on that exception.
        this.close(p, emit);
        continue;
      }
      if (marker) p.chained = true;
      // A new record of the header's logger ends an SGLang message (its traceback lines carry no prefix).
      if (p.continues && !p.closing && p.shape !== '' && this.newRecord(p, line)) {
        this.expire(p, emit);
        continue;
      }
      if (--p.left > 0) keep.push(p);
      else this.expire(p, emit);
    }
    // A record that took this line takes the other records opened by the same header with it.
    this.pending = keep.filter(
      (p) => p.closing !== undefined || !won.has(`${p.rule.incident ?? p.rule.name}\u0000${p.offset}`),
    );
    if (this.heldFirst.size > 0) this.forgetOrphanedHolds();
    void offset;
    return closed;
  }

  /**
   * A member held back for a record that another record's header won (two `follows` rules opening on one
   * header, each its own incident) has no record left to become: it was never raised before the offset fix
   * either, and it must not pin the saved read position (heldFrom) or stay in the map for the daemon's life.
   */
  private forgetOrphanedHolds(): void {
    for (const inc of this.heldFirst.keys())
      if (!this.pending.some((p) => p.incident === inc && !p.joined)) this.heldFirst.delete(inc);
  }

  /** An unprefixed line after a logger's header continues its message (SGLang prints tracebacks so). */
  private continuation(p: Pending, line: string): boolean {
    return !this.newRecord(p, line);
  }

  private newRecord(p: Pending, line: string): boolean {
    const m = p.rule.logger!.record.exec(line.length > 400 ? line.slice(0, 400) : line);
    return m !== null && m.index <= 256 && prefixAllows(line, m.index);
  }
}

/** Literal hits a line may have before LiteralIndex stops listing them and asks each rule (bounds hostile lines). */
const MAX_LITERAL_HITS = 32;
/** Bits of the table of literals' first three characters. */
const TRIGRAM_BITS = 16;

const trigram = (a: number, b: number, c: number): number =>
  (((a * 31 + b) * 31 + c) ^ (a << 7)) & ((1 << TRIGRAM_BITS) - 1);

/**
 * Which rules' literals occur in a line, found in one pass: a table of every literal's first three characters
 * (hashed) says at which positions one may start, and the literals of that first character are compared there.
 * Asking each of a hundred-odd rules whether its literals occur (an `includes` per literal per rule) was most of the
 * matcher's time on a line; a regex over the literals cost ~10 ms to compile in every process. Either way a rule is
 * a candidate exactly when one of its literals occurs in the line (rules without literals always are).
 */
export class LiteralIndex {
  /** Literals by their first UTF-16 unit, with the rules that name them. */
  private readonly byFirst = new Map<number, { lit: string; rules: number[] }[]>();
  private readonly starts = new Uint8Array(1 << TRIGRAM_BITS);
  private readonly any: boolean;
  /** 1 for the rules the last line named, and always for rules without literals. */
  private readonly hit: Uint8Array;
  /** The rules with literals the last line named (their `hit` is cleared from here, not by a walk of all rules). */
  private readonly named: number[] = [];
  /** Rules without literals (always candidates), and every rule (the answer when no rule has literals). */
  private readonly unconditional: number[] = [];
  private readonly all: number[];
  private readonly order: number[] = [];
  private readonly always = (_: number): boolean => true;
  private readonly marked = (ri: number): boolean => this.hit[ri] === 1;

  constructor(private readonly rules: readonly CompiledRule[]) {
    const byLit = new Map<string, number[]>();
    rules.forEach((r, i) => {
      for (const l of r.literals ?? []) {
        const list = byLit.get(l) ?? [];
        if (!list.includes(i)) list.push(i);
        byLit.set(l, list);
      }
    });
    for (const [lit, ids] of byLit) {
      // compileOne keeps only literals of three characters or more.
      this.starts[trigram(lit.charCodeAt(0), lit.charCodeAt(1), lit.charCodeAt(2))] = 1;
      const c = lit.charCodeAt(0);
      const list = this.byFirst.get(c) ?? [];
      list.push({ lit, rules: ids });
      this.byFirst.set(c, list);
    }
    this.any = byLit.size > 0;
    this.hit = new Uint8Array(rules.length);
    rules.forEach((r, i) => {
      if (r.literals === null) {
        this.hit[i] = 1;
        this.unconditional.push(i);
      }
    });
    this.all = rules.map((_, i) => i);
  }

  /** A predicate over rule indexes: whether the rule may match `line` (valid until the next call). */
  candidates(line: string): (ri: number) => boolean {
    if (!this.any) return this.always;
    this.mark(line);
    return this.marked;
  }

  /** The indexes of the rules that may match `line`, ascending: candidates' yes, listed (valid until the next call). */
  list(line: string): readonly number[] {
    if (!this.any) return this.all;
    this.mark(line);
    const named = this.named;
    if (named.length === 0) return this.unconditional;
    const order = this.order;
    order.length = 0;
    for (const ri of this.unconditional) order.push(ri);
    for (const ri of named) order.push(ri);
    return order.sort(ascending);
  }

  private mark(line: string): void {
    const hit = this.hit;
    const named = this.named;
    for (const ri of named) hit[ri] = 0;
    named.length = 0;
    const rules = this.rules;
    const starts = this.starts;
    let hits = 0;
    let a = line.charCodeAt(0);
    let b = line.charCodeAt(1);
    for (let at = 0; at + 2 < line.length; at++) {
      const c = line.charCodeAt(at + 2);
      if (starts[trigram(a, b, c)] === 1) {
        const list = this.byFirst.get(a);
        if (list !== undefined && ++hits > MAX_LITERAL_HITS) {
          // A line full of literals (user text): ask each rule, as the includes of old did.
          for (let i = 0; i < rules.length; i++) {
            const lits = rules[i]!.literals;
            if (hit[i] === 0 && lits !== null && lits.some((l) => line.includes(l))) {
              hit[i] = 1;
              named.push(i);
            }
          }
          break;
        }
        if (list !== undefined) {
          for (const e of list) {
            if (!line.startsWith(e.lit, at)) continue;
            for (const ri of e.rules) {
              if (hit[ri] === 1) continue;
              hit[ri] = 1;
              named.push(ri);
            }
          }
        }
      }
      a = b;
      b = c;
    }
  }
}

const ascending = (x: number, y: number): number => x - y;

/** A line of a record without the header's prefix (vLLM repeats it on every line), when it carries it. */
function bodyOf(p: Pending, line: string): string {
  if (p.prefixLen === 0 || line.length < p.prefixLen) return line;
  return prefixShape(line.slice(0, p.prefixLen)) === p.shape ? line.slice(p.prefixLen) : line;
}

function member(rule: CompiledRule, line: string, lineNo: number, time: number): IncidentMember {
  const nl = line.indexOf('\n');
  const first = nl < 0 ? line : line.slice(0, nl);
  return {
    rule: rule.name,
    lineNo,
    time,
    line: first.length > MEMBER_LINE_KEEP ? first.slice(0, MEMBER_LINE_KEEP) : first,
    process: processKey(first),
  };
}

/** An exception in a member's fields is the incident's root cause; a traceback's final one wins over others. */
function setRootCause(
  inc: Incident,
  rule: CompiledRule,
  fields: Record<string, string>,
  traceback = false,
): void {
  const exception = fields.exception;
  if (exception === undefined) return;
  if (inc.rootCause !== undefined && !traceback) return;
  inc.rootCause = { exception, message: fields.message ?? '', rule: rule.name };
}

function extractValues(rule: CompiledRule, fields: Record<string, string>): EngineValues | undefined {
  if (rule.extract.length === 0) return undefined;
  const out: EngineValues = {};
  for (const [group, gauge] of rule.extract) {
    const v = Number(fields[group]);
    if (fields[group] !== undefined && Number.isFinite(v)) out[gauge] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
