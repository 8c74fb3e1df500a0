// How the causes name what they cite: a probe slot and its last run, a critical line, an engine's held work.
import type { CriticalMemory, EngineMemory, SlotMemory } from '../memory.js';

export const label = (m: SlotMemory): string => `${m.probe} on ${m.endpoint}/${m.conn}`;

export const why = (m: SlotMemory): string =>
  `${label(m)}: ${m.last?.result ?? '?'}${m.last?.error ? ` (${m.last.error})` : ''}, ${m.failStreak} in a row`;

/** A critical line as a cause: its rule and service, and the exception that ended its chain (issue 27). */
export function lineText(c: CriticalMemory): string {
  return `${c.rule} on ${c.service}${c.rootCause !== undefined ? ` (root cause: ${c.rootCause})` : ''}`;
}

export function stallText(e: EngineMemory, now: number): string {
  return `${e.service} holds ${e.running} running and ${e.queued} queued requests (${e.transferQueue} in transfer, ${e.preallocQueue} bootstrapping) with no progress for ${Math.round((now - e.lastProgressAt) / 1000)} s`;
}

/** `symptom; detail` when the state has a symptom to name, the detail alone otherwise. */
export const withSymptom = (symptom: string | undefined, detail: string): string =>
  symptom !== undefined ? `${symptom}; ${detail}` : detail;
