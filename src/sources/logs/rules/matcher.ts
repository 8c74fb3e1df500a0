// Matches decoded lines of one file against a compiled rule set (compile.ts). Each line goes through three
// stages: the record (a multi-line rule's header waits for its closing line; a carrier of user text shields its
// lines from built-in rules), the incident (incidents.ts: a member of an open incident is no event of its own) and
// the request (requests.ts: one request's line printed by every rank is one event, and a loop is an event of its
// own). Events leave in file order through an outbox: a chain head waiting for its root cause holds those behind it.
import type { Severity } from '../../../core/signals.js';
import type { EngineValues } from '../engine-lines.js';
import { OpenCarrier, type CarrierCut, type CarrierLine } from '../carriers.js';
import { isRequestEcho, prefixAllows, prefixShape } from '../request-echo.js';
import { stampText, stampToMs } from '../line-time.js';
import { forRule, type CompiledRule, type RuleSet } from './compile.js';
import {
  Incidents,
  ROOT_CAUSE_WAIT_LINES,
  setRootCause,
  SEVERITY_RANK,
  type Incident,
  type MemberLine,
} from './incidents.js';
import { LiteralIndex } from './literal-index.js';
import { Requests } from './requests.js';

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

// Between a traceback's exception line and the next traceback of a chain (CPython Lib/traceback.py
// _cause_message / _context_message, 3.0 → 3.13): the record goes on to the chain's last exception.
const CHAIN_MARKER =
  /^\s*$|During handling of the above exception, another exception occurred:|The above exception was the direct cause of the following exception:|Traceback \(most recent call last\):|^\s*\+[-=]+/;

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
  /** The first exception line's fields: the record's first error, its incident's root cause (issue 40). */
  firstFields?: Record<string, string>;
  /** Lines may close the record (false until a line matching the rule's `follows.after` went by). */
  armed: boolean;
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
  /** A carrier record of user text was cut off from its tail at a cap (carriers.ts): it ends at the next record. */
  onCarrierCut?: (carrier: string, cap: CarrierCut, lineNo: number) => void;
}

/** A line an open carrier holds until the record's real end is known (carriers.ts `hold`). */
interface HeldLine {
  line: string;
  offset: number;
  lineNo: number;
  rec: { head: boolean; time?: string } | undefined;
  cut: boolean;
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
  private readonly incidents: Incidents;
  private readonly requests: Requests;
  /** The first absorbed member of an incident whose record (the event to be) is still open. */
  private heldFirst = new Map<Incident, RuleMatch>();
  private calls = 0;
  /** A record carrying user text (carriers.ts) is open: built-in rules see none of its lines. */
  private carrier: OpenCarrier | undefined;
  /** The carrier this line opened (its header: the rules it `raises` may match it), else undefined. */
  private header: OpenCarrier | undefined;
  /** Lines after the open carrier's last tail: the engine's if the record ends before another tail. */
  private held: HeldLine[] = [];
  /** Whether the last line matched (a structured record's head line) was a carrier's: see `shielded`. */
  private lastShielded = false;
  /** The rule set has built-in rules (carriers only shield those). */
  private readonly builtIn: boolean;
  private readonly timeOf: (line: string, offset: number) => number;
  private lastStampMs = NaN;
  /** Whether the line being matched is a request echo (asked once per line, on its first built-in match). */
  private echo: boolean | undefined;
  private readonly literals: LiteralIndex;
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
    this.incidents = new Incidents(set.rules, o.incidentWindowMs);
    this.requests = new Requests(o.requestWindowMs, o.loopCount, o.loopWindowMs);
    const now = o.now ?? Date.now;
    this.timeOf = o.timeOf ?? ((line) => this.ownTime(line, now));
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

  /**
   * Whether the line last given to `match` (a structured record's head) is part of a carrier record: user text, or the
   * header that carries it. The scanner asks this before it reads an engine line's gauges (issue 37 item 4): the
   * carrier state is the matcher's, and a line it never saw had no carrier open (one open makes `hasPending` true).
   */
  get shielded(): boolean {
    return this.lastShielded;
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
    if (this.held.length > 0 && this.held[0]!.offset < from) from = this.held[0]!.offset;
    return from === Infinity ? undefined : from;
  }

  reset(): void {
    this.carrier = undefined;
    this.held = [];
    this.lastShielded = false;
    this.outbox = [];
    this.pending = [];
    this.incidents.end();
    this.heldFirst.clear();
    this.requests.clear();
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
    /** The scanner cut the line at maxLineBytes (it is never a carrier's tail). */
    cut = false,
  ): void {
    const c = this.carrier;
    if (c !== undefined) {
      let step = c.takes(line, { rec, cut });
      if (step === 'lines' || step === 'bytes') {
        // Cut off from its tail: it ends at the engine's next record from here, tail or not.
        this.o.onCarrierCut?.(c.carrier.name, step, lineNo);
        step = c.takes(line, { rec, cut });
      }
      if (step === 'rehold') this.held = [];
      if (step === 'hold' || step === 'rehold') {
        // Not known yet to be the engine's: no gauge is read from it (held lines are replayed as rules' input).
        if (rec === undefined || rec.head) this.lastShielded = true;
        this.held.push({ line, offset, lineNo, rec, cut });
        return;
      }
      if (step === 'take' || step === 'tail') {
        // After another tail, the lines held since the last one were the user's: they go with the record.
        if (step === 'tail') this.held = [];
        this.header = undefined;
        this.step(line, offset, emit, lineNo, rec, true);
        return;
      }
      this.endCarrier(emit);
    }
    this.step(line, offset, emit, lineNo, rec, this.opens(line, { rec, cut }));
  }

  /** One line through the record, incident and request stages (`carried`: user text of a carrier record). */
  private step(
    line: string,
    offset: number,
    emit: (m: RuleMatch) => void,
    lineNo: number,
    rec: { head: boolean; time?: string } | undefined,
    carried: boolean,
  ): void {
    // A line went by: a waiting chain head with no record of its incident open counts it.
    for (const o of this.outbox) if (o.wait > 0 && !this.recordOpen(o.m.incident!)) o.wait--;
    this.matchLine(line, offset, (m) => this.send(m, emit), lineNo, carried, rec);
    this.releaseOutbox(emit);
  }

  /** The open carrier ended: the lines it held are the engine's, scanned now in file order. */
  private endCarrier(emit: (m: RuleMatch) => void): void {
    const held = this.held;
    this.held = [];
    this.carrier = undefined;
    for (const h of held) this.match(h.line, h.offset, emit, h.lineNo, h.rec, h.cut);
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
    carried: boolean,
    rec?: { head: boolean; time?: string },
  ): void {
    const record = rec?.head === true;
    if (rec === undefined || rec.head) this.lastShielded = carried;
    const closed =
      this.pending.length > 0 ? this.advancePending(line, offset, lineNo, emit, carried) : undefined;
    // A structured record's later lines are its message's continuation: they may close a record the head opened,
    // never open one (user text in a message, a prompt with raw newlines, is not the engine's output).
    if (rec !== undefined && !rec.head) return;
    this.echo = undefined;
    let time: number | undefined;
    // Only the rules whose literals the line holds, in rule order: walking every rule to ask was a tenth of the
    // matcher's time on a line (a hundred-odd rules, a handful of candidates).
    const order = this.literals.list(line);
    const rules = this.set.rules;
    // An engine's own rule read this line, or a record took it as its exception line: a generic shape on it (a CUDA
    // error in that exception, a NIXL status in that transfer error) adds nothing (issue 40). Generic packs come last.
    let specific = closed !== undefined && closed.size > 0;
    for (let k = 0; k < order.length; k++) {
      const rule = rules[order[k]!]!;
      if (carried && !rule.user && this.header?.carrier.raises?.includes(rule.name) !== true) continue;
      const m = rule.re.exec(forRule(rule, line));
      if (!m || !this.engineWords(rule, m, line, carried, record)) continue;
      // The record that took this line as its exception line is its event (the GUARD assertion ends the thread death).
      if (rule.incident !== undefined && closed?.has(rule.incident)) continue;
      time ??= this.timeOf(rec?.time ?? line, offset);
      const hit: MemberLine = { rule, line, lineNo, time, fields: groupsOf(m, {}) };
      if (rule.generic && specific) {
        this.o.onMember?.({ ...hit, severity: rule.severity, offset });
        continue;
      }
      if (!rule.user && !rule.generic) specific = true;
      if (rule.startup) {
        // A marker, not an event (healthy logs print it at every start): counted as a match, it ends the incidents.
        this.incidents.end();
        this.o.onMember?.({ ...hit, severity: rule.severity, offset });
      } else if (rule.follows) {
        this.openRecord(hit, offset, line.slice(0, m.index), record, emit);
      } else {
        this.raise(hit, offset, emit);
      }
    }
  }

  /** Whether a built-in rule's match is the engine's own words (user rules match any text). */
  private engineWords(
    rule: CompiledRule,
    m: RegExpExecArray,
    line: string,
    carried: boolean,
    record: boolean,
  ): boolean {
    if (rule.user) return true;
    if (carried) {
      // On a carrier's header the rule sees the engine's words only: it ends where the user text may begin, or
      // it ends the line (a message with no user text in it).
      const end = m.index + m[0].length;
      if (end > this.header!.userFrom && line.slice(end).trim() !== '') return false;
    }
    this.echo ??= isRequestEcho(line);
    if (this.echo || !prefixAllows(line, m.index)) return false;
    return !rule.logger || record || rule.logger.prefix.test(line.slice(0, m.index));
  }

  /** A `follows` rule's header: its record opens (and its incident, or it joins the open one). */
  private openRecord(
    hit: MemberLine,
    offset: number,
    prefix: string,
    record: boolean,
    emit: (m: RuleMatch) => void,
  ): void {
    const { rule, line, lineNo, time, fields } = hit;
    // A new header restarts the rule: the previous thread's traceback ended without a match.
    this.dropPending(rule, emit);
    const p: Pending = {
      rule,
      line,
      offset,
      lineNo,
      time,
      fields,
      left: rule.follows!.within,
      shape: prefixShape(prefix),
      prefixLen: prefix.length,
      continues: rule.logger?.continuation === 'unprefixed' && !record,
      chained: false,
      joined: false,
      armed: rule.follows!.after === undefined,
    };
    if (rule.incident !== undefined) {
      const scope = this.incidents.scope(rule, line);
      // A header whose record alone is decisive joins an open incident; a thread death's record always opens
      // its own (a second thread dying is a second incident, however close).
      const open = rule.emitUnclosed ? this.incidents.openAt(scope, time) : undefined;
      if (open) {
        p.incident = open;
        this.incidents.join(open, hit);
        // A graver record than the incident's event so far (a death after its warning) is an event of its own.
        p.joined = !this.escalates(open, rule);
      } else {
        p.incident = this.incidents.start(scope, hit);
        this.heldFirst.delete(p.incident);
      }
    }
    this.pending.push(p);
  }

  /**
   * A one-line match: a member of its incident when one is open (no event of its own), else an event, unless it
   * repeats its request's line (a member too; a loop of it is an event of its own).
   */
  private raise(hit: MemberLine, offset: number, emit: (m: RuleMatch) => void): void {
    const { rule, line, time, fields } = hit;
    const out: RuleMatch = { ...hit, severity: rule.severity, offset };
    const values = extractValues(rule, fields);
    if (values) out.values = values;
    if (rule.incident !== undefined) {
      const scope = this.incidents.scope(rule, line);
      const open = this.incidents.openAt(scope, time);
      if (open && this.escalates(open, rule)) {
        // The incident's warning came first (a deferred release, a failed step): this death is its own event, the
        // warning a member of it.
        this.incidents.join(open, hit);
        out.incident = open;
      } else if (open) {
        this.incidents.join(open, hit);
        out.incident = open;
        // Held back while the record that will be the event is open: if it never closes, this is the event.
        if (this.pending.some((p) => p.incident === open && !p.joined) && !this.heldFirst.has(open))
          this.heldFirst.set(open, out);
        this.o.onMember?.(out);
        return;
      } else out.incident = this.incidents.start(scope, hit);
    }
    if (rule.perRequest !== undefined) {
      const r = this.requests.check(rule, fields, line, time);
      if (r === 'repeat') {
        this.o.onMember?.(out);
        return;
      }
      if (r === 'loop') {
        out.severity = rule.loopSeverity ?? rule.severity;
        out.loop = this.requests.loop;
      }
    }
    // A chain head printed before the dying process's traceback (issue 27): its event waits a few lines for the
    // traceback record that will join its incident, so whoever keeps the event (journal, evidence, alert cause)
    // gets the root cause with it. The matcher's callers see the event late by those lines, never without it.
    if (this.incidents.waitsForRootCause(rule, out.incident)) this.send(out, emit, ROOT_CAUSE_WAIT_LINES);
    else emit(out);
  }

  /** Whether `rule` is graver than the incident's event so far; if so the incident now stands at its severity. */
  private escalates(inc: Incident, rule: CompiledRule): boolean {
    if (SEVERITY_RANK[rule.severity] <= SEVERITY_RANK[inc.severity]) return false;
    inc.severity = rule.severity;
    return true;
  }

  /** Whether the line opens a carrier record (it is then its header, and user text may follow on it). */
  private opens(line: string, how: CarrierLine): boolean {
    this.header = undefined;
    if (!this.builtIn) return false;
    const opened = OpenCarrier.open(line, how);
    if (!opened) return false;
    this.carrier = opened;
    this.header = opened;
    return true;
  }

  /**
   * The input ended or went idle: records that saw their exception line close on it, records whose header alone
   * is decisive are raised now (an engine that died may never write the rest); the others keep waiting.
   */
  finish(emit: (m: RuleMatch) => void): void {
    // Quiet: a carrier record was written whole, so it ended at its last tail; what it held is the engine's.
    if (this.carrier !== undefined) this.endCarrier(emit);
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
      setRootCause(p.incident, p.rule, p.firstFields ?? c.fields);
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
      if (!p.armed) {
        // Closing lines count only past the rule's marker (the current thread's block of a fatal-error dump).
        if (p.rule.follows!.after!.test(line)) p.armed = true;
        if (--p.left > 0) keep.push(p);
        else this.expire(p, emit);
        continue;
      }
      const m = p.rule.follows!.re.exec(forRule(p.rule, line));
      const prefix = m ? line.slice(0, m.index) : '';
      const ours =
        m !== null && (prefixShape(prefix) === p.shape || (p.continues && this.continuation(p, line)));
      if (ours) {
        // An exception line: the record's end unless a chained traceback follows (then its last line is).
        won.add(headerKey);
        p.closing = { line, fields: groupsOf(m, {}) };
        p.firstFields ??= p.closing.fields;
        p.chained = false;
        if (p.rule.incident !== undefined) (closed ??= new Set()).add(p.rule.incident);
        // A record closing on its first closing line (a frame, a panic's message) ends here.
        if (--p.left > 0 && !p.rule.follows!.first) {
          // At the record's own column (the header's prefix, or none on an unprefixed continuation), the closing
          // line ends what the record says: its event goes out now, not when the next line or a quiet period
          // shows that no chain follows (issue 37: a thread death waited 1–1.6 s for the follower's idle settle,
          // every second of it added to traceback → wedged). A chain after it is the same incident: the record
          // stays open as its member (joined, no second event) and its later exception lines fill the incident.
          if (!p.joined && (prefixShape(prefix) === p.shape || (p.continues && m.index === 0))) {
            this.close(p, emit);
            p.joined = true;
          }
          keep.push(p);
        } else this.close(p, emit);
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

/** A line of a record without the header's prefix (vLLM repeats it on every line), when it carries it. */
function bodyOf(p: Pending, line: string): string {
  if (p.prefixLen === 0 || line.length < p.prefixLen) return line;
  return prefixShape(line.slice(0, p.prefixLen)) === p.shape ? line.slice(p.prefixLen) : line;
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
