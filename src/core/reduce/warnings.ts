// Warnings that can name an incident: a warning line of a class the vocabulary marks `names` is remembered
// (bounded), and when probes fail or hang with no critical line to explain it the most recent one names the
// incident (`warning:<class>`, EVIDENCE rank `warning`). A warning alone changes no state.
import { LOG_EVENT_CLASSES, type LogClassEntry, type LogEventClass } from '../vocabulary.js';
import type { LogEventSignal } from '../signals.js';
import type { TargetMemory, WarningMemory } from '../memory.js';

/** Warnings remembered per target, newest last. */
const WARNINGS_KEEP = 16;
const LINE_KEEP = 300;

export function namesIncidents(cls: LogEventClass): boolean {
  const entry: LogClassEntry | undefined = Object.hasOwn(LOG_EVENT_CLASSES, cls)
    ? LOG_EVENT_CLASSES[cls]
    : undefined;
  return entry?.names === true;
}

export function rememberWarning(s: TargetMemory, signal: LogEventSignal): void {
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
