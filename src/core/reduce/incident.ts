// One incident, one diagnosis: between leaving ok and coming back to it, the diagnosis a target shows is the one
// named from the strongest evidence the incident has seen that fits its current state (EVIDENCE in
// vocabulary.ts, strongest first; among critical signatures, the most specific). The verdict is recomputed on
// every signal from what is visible now — a hung run finishes, a gauge freezes, a process exits — and on its own
// names whatever is visible this round; the incident remembers what was proven.
import { type Diagnosis, diagnosisEntry, EVIDENCE_KINDS, type EvidenceKind } from '../vocabulary.js';
import { diagnosisRank } from '../log-classes.js';
import type { Verdict } from '../verdict/evaluate.js';
import type { IncidentEvidence, IncidentMemory, TargetMemory } from '../memory.js';
import type { TargetStateName } from '../vocabulary.js';

/** Distinct diagnoses an incident remembers evidence for; past it the weakest is dropped for a stronger one. */
const EVIDENCE_KEEP = 12;

/**
 * Evidence that names a cause inside the engine survives the process going away ("down after
 * log:sglang_watchdog_timeout"). The rest (a hop, a warning, a hang) said how requests failed or what came with
 * it, and a refused port says more than that about a dead process.
 */
const SURVIVES_DOWN: ReadonlySet<EvidenceKind> = new Set(['signature', 'counter', 'engine']);

/** The evidence kind a diagnosis is named from (every diagnosis the verdict names has one). */
export function evidenceOf(diagnosis: Diagnosis): EvidenceKind {
  return diagnosisEntry(diagnosis)?.evidence ?? 'failing';
}

/**
 * Whether evidence for `e` can name a target in `state`: its vocabulary states, a death it explains, or — for
 * the wedge's diagnosis shown now — the partial recovery to degraded that a flapping state goes through (the
 * evidence still stands; a label that flipped with every round would be the flapping issue 26 is about).
 */
function fits(
  e: IncidentEvidence,
  state: TargetStateName,
  shown: Diagnosis | undefined,
  downSince: number | undefined,
): boolean {
  const states: readonly string[] = diagnosisEntry(e.diagnosis)?.states ?? [];
  if (states.includes(state)) return true;
  // Only evidence from before the target first went down explains the death (issue 41 item 8): a critical line
  // confirmed after it (the restart's own lines, a probe refused) says nothing of why it went down.
  if (state === 'down') return SURVIVES_DOWN.has(e.evidence) && (downSince === undefined || e.at < downSince);
  return state === 'degraded' && e.diagnosis === shown && states.includes('wedged');
}

/** Negative when `a` is stronger evidence than `b`: its kind, then (signatures) how specific the line is. */
function compare(a: IncidentEvidence, b: IncidentEvidence): number {
  const k = EVIDENCE_KINDS.indexOf(a.evidence) - EVIDENCE_KINDS.indexOf(b.evidence);
  return k !== 0 ? k : b.rank - a.rank;
}

/** A signature's rank is its critical line's (a user rule's below every built-in one); others rank alike. */
function rankOf(s: TargetMemory, diagnosis: Diagnosis): number {
  const line = [s.confirmedCritical, ...s.criticalSinceOk].find((c) => c?.diagnosis === diagnosis);
  return line !== undefined ? diagnosisRank(line) : (diagnosisEntry(diagnosis)?.rank ?? 0);
}

function evidence(s: TargetMemory, v: Verdict & { diagnosis: Diagnosis }, now: number): IncidentEvidence {
  return {
    diagnosis: v.diagnosis,
    evidence: evidenceOf(v.diagnosis),
    rank: rankOf(s, v.diagnosis),
    cause: v.cause,
    at: now,
  };
}

/**
 * The strongest evidence among `list` that fits `state`: among equals the one shown now (a state that flaps
 * wedged ↔ degraded must not flip the label between two diagnoses of one rank), else the earliest.
 */
function strongest(
  list: readonly IncidentEvidence[],
  state: TargetStateName,
  shown: Diagnosis | undefined,
  downSince: number | undefined,
): IncidentEvidence | undefined {
  let best: IncidentEvidence | undefined;
  for (const e of list) {
    if (!fits(e, state, shown, downSince)) continue;
    const c = best === undefined ? -1 : compare(e, best);
    if (c < 0 || (c === 0 && e.diagnosis === shown)) best = e;
  }
  return best;
}

/**
 * The verdict as the incident shows it: a non-ok verdict during an open incident is named by the strongest
 * evidence the incident has seen that fits the verdict's state; its state applies either way. Records the
 * verdict's evidence in the incident.
 */
export function heldVerdict(s: TargetMemory, v: Verdict, now: number): Verdict {
  const open = s.incident;
  const diagnosis = v.diagnosis;
  if (open === undefined || v.state === 'ok' || v.state === 'unknown' || diagnosis === null) return v;
  const mine = evidence(s, { ...v, diagnosis }, now);
  remember(open, mine);
  const downSince = v.state === 'down' ? (open.downSince ?? now) : undefined;
  const best = strongest(open.seen, v.state, open.diagnosis, downSince) ?? mine;
  if (best.diagnosis === diagnosis) return v;
  return { ...v, diagnosis: best.diagnosis, cause: heldCause(best, v) };
}

/**
 * After the verdict was applied: opens the incident when the target leaves ok, records the shown diagnosis,
 * closes the incident when the target is ok again.
 */
export function trackIncident(s: TargetMemory, applied: Verdict, now: number): void {
  if (s.state === 'ok') {
    s.incident = undefined;
    return;
  }
  const diagnosis = applied.diagnosis;
  // Only a verdict the hysteresis applied moves the incident (a better one may still be waiting).
  if (s.state !== applied.state || diagnosis === null || s.diagnosis !== diagnosis) return;
  const shown = evidence(s, { ...applied, diagnosis, cause: s.cause }, now);
  if (s.incident === undefined) s.incident = { since: now, diagnosis, seen: [] };
  s.incident.diagnosis = diagnosis;
  if (s.state === 'down') s.incident.downSince ??= now;
  remember(s.incident, shown);
}

function remember(open: IncidentMemory, e: IncidentEvidence): void {
  const known = open.seen.find((x) => x.diagnosis === e.diagnosis);
  if (known !== undefined) {
    known.rank = Math.max(known.rank, e.rank);
    return;
  }
  if (open.seen.length >= EVIDENCE_KEEP) {
    // Full: the weakest goes, if the new evidence is stronger (else the new one is the weakest, and is dropped).
    let weakest = 0;
    for (let i = 1; i < open.seen.length; i++)
      if (compare(open.seen[i]!, open.seen[weakest]!) > 0) weakest = i;
    if (compare(e, open.seen[weakest]!) >= 0) return;
    open.seen.splice(weakest, 1);
  }
  open.seen.push(e);
}

/** The shown diagnosis's cause, and what the verdict sees now. */
function heldCause(best: IncidentEvidence, v: Verdict): string {
  if (v.state === 'down')
    return `down after ${best.diagnosis} (${best.cause}); now ${v.diagnosis}: ${v.cause}`;
  return `${best.cause}; now also ${v.diagnosis}: ${v.cause}`;
}
