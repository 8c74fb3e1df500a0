// Critical engine log signatures: a hit during a verify window fails the step. The rules are the built-in packs'
// critical rules (src/sources/logs/packs), so verify and the daemon agree on what a critical line is. A rule that opens a
// Python traceback (a multi-line `follows` rule, or an exception report) starts a capture, so the report can name
// the exception that ended it.
import { LOG_PACKS } from '../config/schema.js';
import { PACKS } from '../sources/logs/packs/index.js';

export interface CriticalRule {
  name: string;
  pattern: RegExp;
  /** The line opens a Python traceback worth capturing. */
  traceback?: boolean;
}

// Most specific packs first: a bootstrap_thread death is named by the nixl rule, not the generic python one.
const ORDER = ['nixl', 'mooncake', 'sglang', 'vllm', 'python'] as const;

export const CRITICAL_RULES: readonly CriticalRule[] = [
  ...ORDER,
  ...LOG_PACKS.filter((p) => !ORDER.includes(p as never)),
]
  .flatMap((p) => PACKS[p].rules)
  .filter((r) => r.severity === 'critical')
  .map((r) => ({
    name: r.name,
    pattern: new RegExp(r.match),
    traceback: r.follows !== undefined || /exception/i.test(r.name),
  }));

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
/** The last line of a Python traceback: an unindented `SomeError: message` (or a bare `SomeError`). */
const EXCEPTION_LINE = /^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b(?::.*)?$/;

/** Feeds lines (per file, in order) and collects hits; bounded in hits and traceback length. */
export class CriticalScanner {
  readonly hits: CriticalHit[] = [];
  private dropped = 0;
  private readonly open = new Map<string, CriticalHit>();
  private readonly lineNo = new Map<string, number>();

  constructor(private readonly rules: readonly CriticalRule[] = CRITICAL_RULES) {}

  line(text: string, path: string): void {
    const n = (this.lineNo.get(path) ?? 0) + 1;
    this.lineNo.set(path, n);
    const tb = this.open.get(path);
    if (tb?.traceback) {
      tb.traceback.push(text);
      if (EXCEPTION_LINE.test(text)) {
        tb.exception = text;
        this.open.delete(path);
      } else if (tb.traceback.length >= MAX_TRACEBACK_LINES) this.open.delete(path);
    }
    // The exception line that closes a captured traceback (e.g. the GUARD assertion) is the same event.
    if (tb && tb.exception === text) return;
    for (const r of this.rules) {
      if (!r.pattern.test(text)) continue;
      if (this.hits.length >= MAX_HITS) {
        this.dropped++;
        continue;
      }
      const hit: CriticalHit = { rule: r.name, path, line: n, text };
      if (r.traceback) {
        hit.traceback = [text];
        this.open.set(path, hit);
      }
      this.hits.push(hit);
      // One hit per line: the first (most specific) rule names it.
      return;
    }
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
