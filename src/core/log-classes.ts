// What a matched log event means to the classifier: the rule's declared class (src/core/vocabulary.ts
// LOG_EVENT_CLASSES), the same key the alerts select on. Which class a line gets is the pack's decision
// (src/sources/logs/packs, `class` and `classWhen`), so no engine wording or rule name is matched here.
import {
  diagnosisEntry,
  type Diagnosis,
  LOG_EVENT_CLASSES,
  type LogClassEntry,
  USER_RULE_RANK,
} from './vocabulary.js';
import type { LogEventSignal } from './signals.js';

export type LogClass = { kind: 'critical'; diagnosis: Diagnosis } | { kind: 'abort' } | { kind: 'other' };

const DIAGNOSIS_SAFE = /[^A-Za-z0-9_.:-]/g;

/**
 * How specific a critical diagnosis is (the vocabulary's evidence rank; a user rule's below every built-in one).
 * The verdict names the most specific evidence, not the latest line.
 */
export function diagnosisRank(c: { diagnosis: string; user?: boolean }): number {
  if (c.user === true) return USER_RULE_RANK;
  return diagnosisEntry(c.diagnosis)?.rank ?? USER_RULE_RANK;
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
  const entry: LogClassEntry | undefined = Object.hasOwn(LOG_EVENT_CLASSES, e.class)
    ? LOG_EVENT_CLASSES[e.class]
    : undefined;
  if (e.severity === 'critical') {
    if (entry?.diagnosis !== undefined) return { kind: 'critical', diagnosis: entry.diagnosis };
    // Rule names are validated names (config or pack), never free text from the log line.
    const diagnosis = `log:${e.rule}`.replace(DIAGNOSIS_SAFE, '_').slice(0, 80) as `log:${string}`;
    return { kind: 'critical', diagnosis };
  }
  if (entry?.abort === true) return { kind: 'abort' };
  return { kind: 'other' };
}
