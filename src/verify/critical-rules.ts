// Critical engine log signatures: a hit during a verify window fails the step. The daemon's own matcher runs here
// (src/sources/logs/rules/matcher.ts LineMatcher over the same packs): the echo guard, the carriers of user text, incidents
// and tracebacks closing on their last exception line are the daemon's, so verify and the daemon agree on what a
// critical line is (an echoed prompt quoting the NIXL assertion fails neither).
import type { LogPack } from '../config/schema.js';
import { defaultPacks } from '../config/log-engines.js';
import { compileRuleSet, type RuleSet } from '../sources/logs/rules/compile.js';
import { LineMatcher, type RuleMatch } from '../sources/logs/rules/matcher.js';

export interface CriticalHit {
  rule: string;
  path: string;
  /** 1-based line number within the window. */
  line: number;
  text: string;
  /** The traceback that followed (thread_death, scheduler_exception), ending at the exception line. */
  traceback?: string[];
  /** The exception line that ended the traceback, e.g. "AssertionError: First message should be …". */
  exception?: string;
}

const MAX_TRACEBACK_LINES = 40;
const MAX_HITS = 50;

interface PathState {
  matcher: LineMatcher;
  n: number;
  /** Lines since the open record's header (while one is open), for the hit's traceback. */
  capture: string[];
}

/** Feeds lines (per file, in order) and collects hits; bounded in hits and traceback length. */
export class CriticalScanner {
  private readonly found: CriticalHit[] = [];
  private dropped = 0;
  private readonly paths = new Map<string, PathState>();
  private readonly set: RuleSet;

  /** `packs`: the built-in packs to run (default: those of every engine, as replay's default). */
  constructor(packs: readonly LogPack[] = defaultPacks()) {
    this.set = compileRuleSet(packs, []);
  }

  line(text: string, path: string): void {
    let st = this.paths.get(path);
    if (!st) this.paths.set(path, (st = { matcher: new LineMatcher(this.set), n: 0, capture: [] }));
    const s = st;
    s.n++;
    const wasOpen = s.matcher.hasPending;
    if (wasOpen && s.capture.length < MAX_TRACEBACK_LINES) s.capture.push(text);
    s.matcher.match(text, 0, (m) => this.hit(m, path, s), s.n);
    if (!wasOpen && s.matcher.hasPending) s.capture = [text];
    else if (!s.matcher.hasPending) s.capture = [];
  }

  /** The window ended: records still open are raised on what they have. */
  settle(): void {
    for (const [path, s] of this.paths) s.matcher.finish((m) => this.hit(m, path, s));
  }

  /** The hits so far (open records are raised first: reading the hits ends the window's records). */
  get hits(): readonly CriticalHit[] {
    this.settle();
    return this.found;
  }

  private hit(m: RuleMatch, path: string, s: PathState): void {
    if (m.severity !== 'critical') return;
    if (this.found.length >= MAX_HITS) {
      this.dropped++;
      return;
    }
    const [head, ...rest] = m.line.split('\n');
    const hit: CriticalHit = { rule: m.rule.name, path, line: m.lineNo, text: head! };
    if (m.rule.follows) {
      const exception = rest.at(-1);
      const end = exception === undefined ? -1 : s.capture.lastIndexOf(exception);
      hit.traceback =
        end >= 0 ? s.capture.slice(0, end + 1) : s.capture.length > 0 ? [...s.capture] : [head!];
      if (exception !== undefined) hit.exception = exception;
    }
    this.found.push(hit);
  }

  get droppedHits(): number {
    return this.dropped;
  }
}

/** One line naming a hit: the rule, where, and the exception that ended its traceback. */
export function describeHit(h: CriticalHit): string {
  const what = h.exception ? `${h.text.trim()} … ${h.exception.trim()}` : h.text.trim();
  return `${h.rule} at ${h.path}:${h.line} (in window): ${what}`;
}
