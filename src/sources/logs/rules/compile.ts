// Rules compiled once per log source (built-in packs + user rules): each rule's regex, the literals every match
// must contain, and a combined literal prefilter (one regex, built as a trie of those literals) that lets the chunk
// scanner skip the ~99.9% of lines no rule can match without looking at them one by one. User patterns are checked
// here and run on V8's linear engine.
import type { EngineGauge, LogPack, RuleConfig } from '../../../config/schema.js';
import type { LogEventClass, Severity } from '../../../core/signals.js';
import { literalAvoidsBatchLines } from '../batch-lines.js';
import { PACKS, type EngineLineKind, type PackRule } from '../packs/index.js';
import { requiredLiterals } from '../../../lib/regex.js';
import { ruleProblems } from '../../../config/rule-problems.js';
import { CARRIERS } from '../carriers.js';
import { LOGGERS, type EngineLogger } from '../loggers.js';

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
  /**
   * The closing line of a multi-line record; `after`: only lines past one matching it close it; `first`: it closes on
   * its first closing line, not on its chain's last (PackRule.follows).
   */
  follows?: { re: RegExp; within: number; after?: RegExp; first?: true };
  /** A shape any engine prints: nothing of its own on a line a specific rule read (PackRule.generic). */
  generic?: true;
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

/** The class an event of this match carries: the rule's, unless a `classWhen` entry matches its fields. */
export function eventClass(m: {
  rule: CompiledRule;
  line: string;
  fields: Record<string, string>;
}): LogEventClass {
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
    if (p.generic === true) compiled.generic = true;
  }
  if (rule.follows) {
    compiled.follows = { re: userRegExp(rule.follows.match, user), within: rule.follows.within };
    const f = (rule as PackRule).follows;
    if (!user && f?.after !== undefined) compiled.follows.after = new RegExp(f.after);
    if (!user && f?.first === true) compiled.follows.first = true;
  }
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
export const forRule = (rule: CompiledRule, line: string) =>
  rule.user && line.length > USER_RULE_MAX_CHARS ? line.slice(0, USER_RULE_MAX_CHARS) : line;

/** escapeRegExp of one character, without a regex replace per trie node (thousands at every start). */
const escapeChar = (ch: string): string => (REGEX_SPECIAL.has(ch) ? `\\${ch}` : ch);
const REGEX_SPECIAL = new Set([...'.*+?^${}()|[]\\']);

/** A regex alternation written as a trie, so V8 tests each position against few first characters. */
function trieRegex(words: string[]): string {
  // Children in arrays, not a Map: emit once ran optimized on Map entries and deoptimized part-way through its
  // recursion (a lazy deopt per frame on the stack), tens of ms of start-up in every process with all packs.
  interface Node {
    end: boolean;
    chars: string[];
    kids: Node[];
  }
  const node = (): Node => ({ end: false, chars: [], kids: [] });
  const root = node();
  for (const w of words) {
    let n = root;
    for (const ch of w) {
      const i = n.chars.indexOf(ch);
      let c = i < 0 ? undefined : n.kids[i];
      if (c === undefined) {
        c = node();
        n.chars.push(ch);
        n.kids.push(c);
      }
      n = c;
    }
    n.end = true;
  }
  const emit = (n: Node): string => {
    if (n.end) return ''; // a shorter literal already suffices
    const alts: string[] = [];
    for (let i = 0; i < n.chars.length; i++) alts.push(escapeChar(n.chars[i]!) + emit(n.kids[i]!));
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
