// What a matched log event means to the classifier. Rule names come from the packs in src/logs/packs/ and
// from user rules, so the mapping keys on stable traits (severity, the thread the exception killed, the
// AbortReq reason) rather than on one exact rule name.
import type { LogEventSignal } from '../signals.js';

export type LogClass = { kind: 'critical'; diagnosis: string } | { kind: 'abort' } | { kind: 'other' };

const DIAGNOSIS_SAFE = /[^A-Za-z0-9_.:-]/g;

/** Thread names a thread-death event carries: the rule's `thread`/`target` fields, else the `(name)` in the line. */
function threadsOf(e: LogEventSignal): string[] {
  const named = [e.fields.target, e.fields.thread].filter((f): f is string => f !== undefined && f !== '');
  const inLine = /Exception in thread [^\n(]*\(([A-Za-z_][\w.]*)\)/.exec(e.line)?.[1];
  return inLine ? [...named, inLine] : named;
}

export function classifyLog(e: LogEventSignal): LogClass {
  if (e.severity === 'critical') {
    const bootstrap =
      threadsOf(e).some((t) => /bootstrap_thread/.test(t)) ||
      /bootstrap_thread/.test(e.rule) ||
      // The NIXL GUARD assertion is the same incident when the header went to another stream.
      e.line.includes("First message should be b'NixlMsgGuard'");
    if (bootstrap) return { kind: 'critical', diagnosis: 'kv_bootstrap_thread_dead' };
    // Rule names are validated names (config or pack), never free text from the log line.
    return { kind: 'critical', diagnosis: `log:${e.rule}`.replace(DIAGNOSIS_SAFE, '_').slice(0, 80) };
  }
  if (/abort/i.test(e.rule) || e.line.includes('Aborted by AbortReq')) return { kind: 'abort' };
  return { kind: 'other' };
}
