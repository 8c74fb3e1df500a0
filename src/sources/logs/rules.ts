// Rules: compiled once per log source (built-in packs + user rules), matched line by line. A combined
// literal prefilter (one regex, built as a trie of the literals every match must contain) lets the chunk
// scanner skip the ~99.9% of lines no rule can match without looking at them one by one.
import type { EngineGauge, LogPack, RuleConfig } from '../../config/schema.js';
import type { LogEventClass, Severity } from '../../core/signals.js';
import type { EngineValues } from './engine-lines.js';
import { literalAvoidsBatchLines } from './batch-lines.js';
import { PACKS, type EngineLineKind, type PackRule } from './packs/index.js';
import { escapeRegExp, requiredLiterals, validateUserPattern } from './regex.js';
import { CARRIERS, OpenCarrier } from './carriers.js';
import { isRequestEcho, prefixAllows, prefixShape } from './request-echo.js';

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

export interface RuleMatch {
  rule: CompiledRule;
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

/** Problems with one user rule (patterns, extract groups), each prefixed with the field it concerns. */
export function ruleProblems(rule: RuleConfig): string[] {
  const problems: string[] = [];
  const check = (key: string, src: string | undefined) => {
    if (src === undefined) return;
    const why = validateUserPattern(src);
    if (why !== undefined) problems.push(`${key}: ${why}`);
  };
  check('match', rule.match);
  check('follows.match', rule.follows?.match);
  if (problems.length === 0 && rule.extract) {
    const groups = new Set(
      [...`${rule.match}\n${rule.follows?.match ?? ''}`.matchAll(/\(\?<([A-Za-z_]\w*)>/g)].map((m) => m[1]),
    );
    for (const g of Object.keys(rule.extract)) {
      if (!groups.has(g)) problems.push(`extract.${g}: the pattern has no named group (?<${g}>…)`);
    }
  }
  return problems;
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
    const alts = [...n.next].map(([ch, c]) => escapeRegExp(ch) + emit(c));
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
  fields: Record<string, string>;
  left: number;
  /** The header's prefix shape: the closing line must carry the same prefix (see request-echo.ts). */
  shape: string;
}

function groupsOf(m: RegExpExecArray, into: Record<string, string>): Record<string, string> {
  if (m.groups) for (const [k, v] of Object.entries(m.groups)) if (v !== undefined) into[k] = v;
  return into;
}

/** Lines after a single-line event of an incident during which the same incident's single lines are absorbed. */
export const INCIDENT_LINES = 200;
/** Request ids remembered for per-request de-duplication (oldest forgotten first). */
const PER_REQUEST_KEEP = 4096;

/**
 * Matches decoded lines of one file against a rule set, holding the state of multi-line rules.
 * Lines arrive in file order; `hasPending` tells the scanner it must show every line for a while.
 * One incident makes one event: a multi-line record absorbs its own incident's single-line matches, the
 * rules of one incident fire once per INCIDENT_LINES lines, and one request's line repeated per rank once.
 */
export class LineMatcher {
  private pending: Pending[] = [];
  /** Incident key → line number of its last event. */
  private incidents = new Map<string, number>();
  private seenRequests = new Set<string>();
  private calls = 0;
  /** A record carrying user text (carriers.ts) is open: built-in rules see none of its lines. */
  private carrier: OpenCarrier | undefined;
  /** The rule set has built-in rules (carriers only shield those). */
  private readonly builtIn: boolean;

  constructor(readonly set: RuleSet) {
    this.builtIn = set.rules.some((r) => !r.user);
  }

  get hasPending(): boolean {
    // An open carrier must see every line, or it could not tell where it ends.
    return this.pending.length > 0 || this.carrier !== undefined;
  }

  reset(): void {
    this.carrier = undefined;
    this.pending = [];
    this.incidents.clear();
    this.seenRequests.clear();
  }

  /** `lineNo` counts every line of the file (the scanner knows it); without it, lines matched so far. */
  match(line: string, offset: number, emit: (m: RuleMatch) => void, lineNo = ++this.calls): void {
    const carried = this.builtIn && this.carried(line);
    const closed = this.pending.length > 0 ? this.advancePending(line, lineNo, emit, carried) : undefined;
    let echo: boolean | undefined;
    for (const rule of this.set.rules) {
      if (carried && !rule.user) continue;
      const lits = rule.literals;
      if (lits !== null) {
        let found = false;
        for (const l of lits) {
          if (line.includes(l)) {
            found = true;
            break;
          }
        }
        if (!found) continue;
      }
      const m = rule.re.exec(forRule(rule, line));
      if (!m) continue;
      if (!rule.user) {
        echo ??= isRequestEcho(line);
        if (echo || !prefixAllows(line, m.index)) continue;
      }
      if (rule.incident !== undefined && closed?.has(rule.incident)) continue;
      const fields = groupsOf(m, {});
      // Single lines (and records whose header alone is the event) of a recent incident are part of it. A thread
      // death's record always opens: a second thread dying is a second incident, however close.
      if (rule.incident !== undefined && (!rule.follows || rule.emitUnclosed)) {
        const last = this.incidents.get(rule.incident);
        if (last !== undefined && lineNo - last <= INCIDENT_LINES) continue;
      }
      if (rule.follows) {
        // A new header restarts the rule: the previous thread's traceback ended without a match.
        this.pending = this.pending.filter((p) => p.rule !== rule);
        this.pending.push({
          rule,
          line,
          offset,
          lineNo,
          fields,
          left: rule.follows.within,
          shape: prefixShape(line.slice(0, m.index)),
        });
        continue;
      }
      // An open record of the same incident will be the event (its lines are this incident's).
      if (rule.incident !== undefined && this.pending.some((p) => p.rule.incident === rule.incident))
        continue;
      if (rule.perRequest !== undefined && !this.firstForRequest(rule, fields)) continue;
      if (rule.incident !== undefined) this.incidents.set(rule.incident, lineNo);
      const out: RuleMatch = { rule, line, offset, lineNo, fields };
      const values = extractValues(rule, fields);
      if (values) out.values = values;
      emit(out);
    }
  }

  /** Whether the line is user text of a carrier record (an open one, or one this line opens). */
  private carried(line: string): boolean {
    if (this.carrier) {
      if (this.carrier.takes(line)) return true;
      this.carrier = undefined;
    }
    const opened = OpenCarrier.open(line);
    if (!opened) return false;
    if (!opened.closed) this.carrier = opened;
    return true;
  }

  /**
   * The input ended or went idle: records whose header alone is decisive are raised now (an engine that died
   * may never write the rest); the others keep waiting.
   */
  finish(emit: (m: RuleMatch) => void): void {
    const keep: Pending[] = [];
    for (const p of this.pending) {
      if (p.rule.emitUnclosed) this.emitHeader(p, emit);
      else keep.push(p);
    }
    this.pending = keep;
  }

  private emitHeader(p: Pending, emit: (m: RuleMatch) => void): void {
    if (p.rule.incident !== undefined) this.incidents.set(p.rule.incident, p.lineNo);
    emit({ rule: p.rule, line: p.line, offset: p.offset, lineNo: p.lineNo, fields: p.fields });
  }

  /** False when this rule already fired for this request (another rank printed the same line). */
  private firstForRequest(rule: CompiledRule, fields: Record<string, string>): boolean {
    const id = fields[rule.perRequest!];
    if (id === undefined || id === '') return true;
    const key = `${rule.name}\u0000${id}`;
    if (this.seenRequests.has(key)) return false;
    this.seenRequests.add(key);
    if (this.seenRequests.size > PER_REQUEST_KEEP) {
      this.seenRequests.delete(this.seenRequests.values().next().value!);
    }
    return true;
  }

  /** Advances open records over one line; returns the incidents a record closed on it. */
  private advancePending(
    line: string,
    lineNo: number,
    emit: (m: RuleMatch) => void,
    carried: boolean,
  ): Set<string> | undefined {
    let closed: Set<string> | undefined;
    const keep: Pending[] = [];
    // Records that closed, by header: the first (most specific) record of an incident wins its header.
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
      if (m && prefixShape(line.slice(0, m.index)) === p.shape) {
        won.add(headerKey);
        const fields = groupsOf(m, { ...p.fields });
        const out: RuleMatch = {
          rule: p.rule,
          line: `${p.line}\n${line}`,
          offset: p.offset,
          lineNo: p.lineNo,
          fields,
        };
        const values = extractValues(p.rule, fields);
        if (values) out.values = values;
        if (p.rule.incident !== undefined) {
          (closed ??= new Set()).add(p.rule.incident);
          this.incidents.set(p.rule.incident, lineNo);
        }
        emit(out);
      } else if (--p.left > 0) keep.push(p);
      else if (p.rule.emitUnclosed) this.emitHeader(p, emit);
    }
    // A closed record takes the other records opened by the same header with it.
    this.pending = keep.filter((p) => !won.has(`${p.rule.incident ?? p.rule.name}\u0000${p.offset}`));
    return closed;
  }
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
