// The log case of the reducer: a critical line becomes evidence waiting for a probe to confirm it (a failure or
// a hang with no first token after it), and abort lines feed the abort-storm window, minus our own probes' aborts.
import { rootCauseText, type LogEventSignal } from '../signals.js';
import { confirmDueAt, confirmsLine } from '../confirm.js';
import { isCompletion } from '../vocabulary.js';
import { classifyLog, diagnosisRank, mostSpecific } from '../log-classes.js';
import type { Action, ClassifierConfig, CriticalMemory, DetectEvent, TargetMemory } from '../memory.js';
import { rememberWarning } from './warnings.js';

const CRITICAL_KEEP = 10;
const LINE_KEEP = 500;
const MEMBERS_KEEP = 10;

export function onLog(
  s: TargetMemory,
  signal: LogEventSignal,
  now: number,
  cfg: ClassifierConfig,
  events: DetectEvent[],
  actions: Action[],
): void {
  const cls = classifyLog(signal);
  rememberWarning(s, signal);
  if (cls.kind === 'critical') {
    const mem: CriticalMemory = {
      time: signal.time,
      service: signal.service,
      rule: signal.rule,
      diagnosis: cls.diagnosis,
      line: signal.line.slice(0, LINE_KEEP),
      ...(signal.user === true ? { user: true } : {}),
    };
    const rootCause = rootCauseText(signal.incident);
    if (rootCause !== undefined) mem.rootCause = rootCause;
    if (signal.incident !== undefined && signal.incident.absorbed > 0)
      mem.absorbed = signal.incident.absorbed;
    s.counters.criticalEvents++;
    s.criticalSinceOk.push(mem);
    // Bounded, but the most specific line stays: it names the wedge however many lines follow it.
    if (s.criticalSinceOk.length > CRITICAL_KEEP) {
      const keep = mostSpecific(s.criticalSinceOk);
      const drop = s.criticalSinceOk.findIndex((c) => c !== keep);
      s.criticalSinceOk.splice(drop, 1);
    }
    // The most specific evidence waits for confirmation, not the latest line: a user rule's line after the
    // thread death does not replace it, and a confirmed diagnosis holds until the target recovers unless a
    // more specific line comes to be confirmed in turn.
    const held = s.pendingCritical ?? s.confirmedCritical;
    if (held === undefined || diagnosisRank(mem) > diagnosisRank(held)) s.pendingCritical = mem;
    events.push({
      type: 'critical_log',
      at: now,
      ...mem,
      ...(signal.incident !== undefined
        ? { members: signal.incident.members.slice(0, MEMBERS_KEEP).map((m) => `${m.rule}@${m.lineNo}`) }
        : {}),
    });
    if (s.lastConfirmAt === undefined || now - s.lastConfirmAt >= cfg.detect.confirmInterval) {
      s.lastConfirmAt = now;
      s.counters.confirmations++;
      actions.push({ kind: 'confirm', reason: `${signal.rule} on ${signal.service}` });
    }
  } else if (cls.kind === 'abort') {
    // Our own probe's abort (it timed out or was cut): the engine logged the id we sent. Not a storm.
    const own =
      signal.fields.rid !== undefined ? s.ownIds?.find((o) => o.id === signal.fields.rid) : undefined;
    if (own !== undefined && own.left > 0) {
      own.left--;
      s.ownAborts = (s.ownAborts ?? 0) + 1;
      return;
    }
    s.aborts.push(signal.time);
    if (s.aborts.length > cfg.detect.abortStormCount) s.aborts.shift();
  }
}

/**
 * A completion run still in flight confirmAfter after a critical line confirms it, unless the engine served while
 * it waited (confirm.ts), judged on every signal (the verdict counts the same hang as a failure, and the two must
 * agree).
 */
export function confirmByHang(
  s: TargetMemory,
  now: number,
  cfg: ClassifierConfig,
  events: DetectEvent[],
): void {
  const pending = s.pendingCritical;
  if (!pending) return;
  const hung = s.inflight?.find(
    (i) =>
      isCompletion(cfg.probes[i.probe]?.kind) &&
      confirmsLine(i.startedAt, i.firstTokenMs, pending.time, now, cfg.detect.confirmAfter, s.servingAt),
  );
  if (!hung) return;
  s.confirmedCritical = pending;
  s.pendingCritical = undefined;
  events.push({
    type: 'critical_confirmed',
    at: now,
    rule: pending.rule,
    diagnosis: pending.diagnosis,
    by: `${hung.probe} on ${hung.endpoint}/${hung.conn} in flight for ${Math.round((now - hung.startedAt) / 1000)} s`,
  });
}

/**
 * When the pending critical line may next be confirmed by a completion in flight (confirm.ts confirmDueAt), if
 * later than now: the step's `wakeAt`, so the confirmation lands at its deadline and not on the next periodic tick.
 */
export function nextConfirmAt(s: TargetMemory, now: number, cfg: ClassifierConfig): number | undefined {
  const pending = s.pendingCritical;
  if (!pending) return undefined;
  let next: number | undefined;
  for (const i of s.inflight ?? []) {
    if (!isCompletion(cfg.probes[i.probe]?.kind)) continue;
    const due = confirmDueAt(
      i.startedAt,
      i.firstTokenMs,
      pending.time,
      now,
      cfg.detect.confirmAfter,
      s.servingAt,
    );
    if (due !== undefined && (next === undefined || due < next)) next = due;
  }
  return next;
}

export function pruneAborts(s: TargetMemory, now: number, cfg: ClassifierConfig): void {
  // Aborts before a wedge are its prelude (an abort cascade is how the NIXL thread dies): once the target
  // is wedged they are attributed to it, so a remediated target does not stay degraded on old aborts.
  const wedgeStart = s.state === 'wedged' || s.state === 'down' ? s.since : -Infinity;
  const from = Math.max(now - cfg.detect.abortStormWindow, wedgeStart);
  while (s.aborts.length > 0 && s.aborts[0]! < from) s.aborts.shift();
}
