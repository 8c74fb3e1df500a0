// Warnings that can name an incident: a warning line of a class the vocabulary marks `names` is remembered
// (bounded), and when probes fail or hang with no critical line to explain it the most recent one names the
// incident (`warning:<class>`, EVIDENCE rank `warning`). A warning alone changes no state.
import { LOG_EVENT_CLASSES, type LogClassEntry, type LogEventClass } from '../vocabulary.js';
import type { LogEventSignal } from '../signals.js';
import type { TargetState, WarningMemory } from './memory.js';

/** Warnings remembered per target, newest last. */
const WARNINGS_KEEP = 16;
const LINE_KEEP = 300;

export function namesIncidents(cls: LogEventClass): boolean {
  const entry: LogClassEntry | undefined = Object.hasOwn(LOG_EVENT_CLASSES, cls)
    ? LOG_EVENT_CLASSES[cls]
    : undefined;
  return entry?.names === true;
}

export function rememberWarning(s: TargetState, signal: LogEventSignal): void {
  // A user rule sees request-echo lines the built-in rules are guarded from: its warnings name nothing.
  if (signal.severity !== 'warning' || signal.user === true || !namesIncidents(signal.class)) return;
  const w: WarningMemory = {
    time: signal.time,
    service: signal.service,
    rule: signal.rule,
    class: signal.class,
    line: signal.line.slice(0, LINE_KEEP),
  };
  const list = (s.warnings ??= []);
  list.push(w);
  if (list.length > WARNINGS_KEEP) list.splice(0, list.length - WARNINGS_KEEP);
}

/**
 * The most recent naming warning of the incident: logged since the target was last ok, or up to `lookback`
 * before that (a hang is judged `hangAfter` after it started, and the line that explains it comes with its start).
 */
export function incidentWarning(s: TargetState, lookback: number): WarningMemory | undefined {
  // Never ok yet: from when the target was first seen, not from the start of a log read `from: start`.
  const from = (s.lastOkAt ?? s.since) - lookback;
  const list = s.warnings ?? [];
  for (let i = list.length - 1; i >= 0; i--) if (list[i]!.time >= from) return list[i];
  return undefined;
}

// Rule, class and service, as for criticals: the line itself stays in the event, out of labels and annotations.
export const warningText = (w: WarningMemory): string => `${w.rule} (${w.class}) on ${w.service}`;
