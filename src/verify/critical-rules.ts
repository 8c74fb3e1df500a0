// Critical engine log signatures: a hit during a verify window fails the step. Strings are quoted from
// engine-signals.md (§1.1 thread death and NIXL GUARD assertion, §1.3, §1.8). A thread-death or exception line
// starts a traceback capture, so the report can name the exception that ended it.
//
// These live here rather than in src/logs/ because that rule engine did not exist when verify was written;
// a verify window only needs "did any of these appear", not the daemon's follow/offset machinery.

export interface CriticalRule {
  name: string;
  pattern: RegExp;
  /** The line opens a Python traceback worth capturing. */
  traceback?: boolean;
}

export const CRITICAL_RULES: readonly CriticalRule[] = [
  // CPython threading.excepthook: an unhandled exception ended a worker thread (the process keeps running).
  { name: 'thread_death', pattern: /^Exception in thread .+:\s*$/, traceback: true },
  { name: 'nixl_guard_assertion', pattern: /AssertionError: First message should be b'NixlMsgGuard'/ },
  { name: 'scheduler_exception', pattern: /Scheduler hit an exception: /, traceback: true },
  {
    name: 'child_sigquit',
    pattern: /Received sigquit from a child process\. It usually means the child failed\./,
  },
  {
    name: 'transfer_worker_error',
    pattern: /Unexpected transfer worker error for room \d+/,
    traceback: true,
  },
];

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
    for (const r of this.rules) {
      if (!r.pattern.test(text)) continue;
      // The GUARD assertion inside a thread_death traceback is the same event: name it there, not twice.
      if (tb && tb.exception === text && tb.rule === 'thread_death') continue;
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
