// Reads of a target's memory that both halves of the core use: the reducer (src/core/reduce/) while it changes the
// memory, the verdict (src/core/verdict/) while it judges it. Here, so that neither half imports the other.
import type {
  ClassifierConfig,
  EngineFailureKind,
  EngineMemory,
  TargetMemory,
  WarningMemory,
} from './memory.js';
import { isCompletion } from './vocabulary.js';

/** How many failures of `kind` the engine's counters reported within failureWindow. */
export function failuresWithin(
  e: EngineMemory,
  kind: EngineFailureKind,
  now: number,
  cfg: ClassifierConfig,
): number {
  return (e.failures?.recent ?? [])
    .filter((r) => r.kind === kind && now - r.at < cfg.detect.failureWindow)
    .reduce((a, r) => a + r.n, 0);
}

/**
 * The engine's values no longer stand: its last scrape failed, or scrapes stopped arriving (the same rule as the
 * stall clock's, engines.ts busyUnknown). Nothing is judged on them.
 */
export function stale(e: EngineMemory, now: number, cfg: ClassifierConfig): boolean {
  return e.unknown === true || (e.lastSource === 'metrics' && now - e.lastSignalAt >= cfg.detect.stallAfter);
}

export function ownCutsWithin(s: TargetMemory, now: number, cfg: ClassifierConfig): number {
  return (s.ownCuts ?? []).filter((t) => now - t < cfg.detect.failureWindow).length;
}

/**
 * The most recent naming warning of the incident: logged since the target was last ok, or up to `lookback`
 * before that (a hang is judged `hangAfter` after it started, and the line that explains it comes with its start).
 */
export function incidentWarning(s: TargetMemory, lookback: number): WarningMemory | undefined {
  // Never ok yet: from when the target was first seen, not from the start of a log read `from: start`.
  const from = (s.lastOkAt ?? s.since) - lookback;
  const list = s.warnings ?? [];
  for (let i = list.length - 1; i >= 0; i--) if (list[i]!.time >= from) return list[i];
  return undefined;
}

// Rule, class and service, as for criticals: the line itself stays in the event, out of labels and annotations.
export const warningText = (w: WarningMemory): string => `${w.rule} (${w.class}) on ${w.service}`;

/**
 * How many of our completions were in flight when the engine's last reading was taken: those still in flight that
 * had started, and those finished since that spanned it (a slot runs one at a time). The reading, not now: a probe
 * that finished after the scrape is still in its running count.
 */
export function oursAt(s: TargetMemory, cfg: ClassifierConfig, at: number): number {
  const still = (s.inflight ?? []).filter(
    (r) => isCompletion(cfg.probes[r.probe]?.kind) && r.startedAt <= at,
  );
  const ended = Object.values(s.slots).filter(
    (m) =>
      isCompletion(m.probeKind) &&
      m.last !== undefined &&
      m.last.start <= at &&
      m.last.start + m.last.durationMs > at &&
      !still.some((r) => r.probe === m.probe && r.endpoint === m.endpoint && r.conn === m.conn),
  );
  return still.length + ended.length;
}
