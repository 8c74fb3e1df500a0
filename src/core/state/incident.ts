// One incident, one diagnosis: between leaving ok and coming back to it, the diagnosis a target shows changes
// only to one named from stronger evidence (EVIDENCE in vocabulary.ts, strongest first). The verdict is
// recomputed on every signal from what is visible now — a hung run finishes, a gauge freezes, a process exits —
// and on its own names whatever is visible this round; the incident remembers what was proven.
import { type Diagnosis, diagnosisEntry, EVIDENCE_KINDS, type EvidenceKind } from '../vocabulary.js';
import type { Verdict } from '../verdict.js';
import type { IncidentMemory, TargetState } from './memory.js';

/** Distinct diagnoses an incident remembers evidence for (each with its first cause). */
const EVIDENCE_KEEP = 8;

/**
 * Evidence that names a cause inside the engine: it survives the process going away (`down` after a
 * confirmed watchdog line says so). Weaker evidence only described how requests failed, and a refused port
 * says more than that.
 */
const SURVIVES_DOWN: ReadonlySet<EvidenceKind> = new Set(['signature', 'counter', 'engine']);

/** The evidence kind a diagnosis is named from (every diagnosis the verdict names has one). */
export function evidenceOf(diagnosis: Diagnosis): EvidenceKind {
  return diagnosisEntry(diagnosis)?.evidence ?? 'failing';
}

/** Smaller is stronger. */
export const strength = (kind: EvidenceKind): number => EVIDENCE_KINDS.indexOf(kind);

/** Whether `v` names a diagnosis over the open incident's: stronger evidence, or a death the held one does not explain. */
function replaces(open: IncidentMemory, v: Verdict & { diagnosis: Diagnosis }, state: TargetState): boolean {
  if (strength(evidenceOf(v.diagnosis)) < strength(open.evidence)) return true;
  return v.state === 'down' && state.state !== 'down' && !SURVIVES_DOWN.has(open.evidence);
}

/**
 * The verdict as the incident shows it: a non-ok verdict during an open incident keeps the incident's diagnosis
 * unless it replaces it; its state applies either way. Records the verdict's evidence in the incident.
 */
export function heldVerdict(s: TargetState, v: Verdict, now: number): Verdict {
  const open = s.incident;
  const diagnosis = v.diagnosis;
  if (open === undefined || v.state === 'ok' || v.state === 'unknown' || diagnosis === null) return v;
  remember(open, diagnosis, v.cause, now);
  if (diagnosis === open.diagnosis || replaces(open, { ...v, diagnosis }, s)) return v;
  return { ...v, diagnosis: open.diagnosis, cause: heldCause(open, v) };
}

/**
 * After the verdict was applied: opens the incident when the target leaves ok, follows a replaced diagnosis,
 * closes it when the target is ok again.
 */
export function trackIncident(s: TargetState, applied: Verdict, now: number): void {
  if (s.state === 'ok') {
    s.incident = undefined;
    return;
  }
  const diagnosis = applied.diagnosis;
  // Only a verdict the hysteresis applied moves the incident (a better one may still be waiting).
  if (s.state !== applied.state || diagnosis === null || s.diagnosis !== diagnosis) return;
  const open = s.incident;
  if (open === undefined) {
    s.incident = { since: now, diagnosis, evidence: evidenceOf(diagnosis), cause: s.cause, seen: [] };
    remember(s.incident, diagnosis, s.cause, now);
    return;
  }
  if (open.diagnosis === diagnosis) return;
  open.diagnosis = diagnosis;
  open.evidence = evidenceOf(diagnosis);
  open.cause = s.cause;
  remember(open, diagnosis, s.cause, now);
}

function remember(open: IncidentMemory, diagnosis: Diagnosis, cause: string, now: number): void {
  if (open.seen.length >= EVIDENCE_KEEP || open.seen.some((e) => e.diagnosis === diagnosis)) return;
  open.seen.push({ diagnosis, evidence: evidenceOf(diagnosis), cause, at: now });
}

/** The held diagnosis's cause, and what the verdict sees now. */
function heldCause(open: IncidentMemory, v: Verdict): string {
  if (v.state === 'down')
    return `down after ${open.diagnosis} (${open.cause}); now ${v.diagnosis}: ${v.cause}`;
  return `${open.cause}; now also ${v.diagnosis}: ${v.cause}`;
}
