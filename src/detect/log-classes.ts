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

/**
 * How specific a critical diagnosis is: a named incident (the bootstrap thread death) above any other built-in
 * rule, above the user's own rules. The verdict names the most specific evidence, not the latest line.
 */
export function diagnosisRank(c: { diagnosis: string; user?: boolean }): number {
  if (!c.diagnosis.startsWith('log:')) return 3;
  return c.user === true ? 1 : 2;
}

/** The most specific of `cs` (the earliest among equals: the first thing that broke). */
export function mostSpecific<T extends { diagnosis: string; user?: boolean }>(
  cs: readonly T[],
): T | undefined {
  let best: T | undefined;
  for (const c of cs) if (best === undefined || diagnosisRank(c) > diagnosisRank(best)) best = c;
  return best;
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
