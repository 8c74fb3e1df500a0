// A candidate diagnosis with the worth its vocabulary row gives it, and the pick: the strongest evidence that fits
// the state (EVIDENCE, strongest first), then the most specific (a signature's critical line), then the registry's
// order. The same comparison the incident hold makes (state/incident.ts), so what the verdict names this round and
// what the incident keeps agree.
import {
  type Diagnosis,
  diagnosisEntry,
  EVIDENCE_KINDS,
  type EvidenceKind,
  type TargetStateName,
} from '../vocabulary.js';
import type { Candidate } from './types.js';

/**
 * A candidate for `diagnosis`: its evidence kind and rank from the vocabulary, fitting the states `fits` (by default
 * every state of its row; a family narrows them where its evidence proves less).
 */
export function candidate(
  diagnosis: Diagnosis,
  cause: string,
  opts: { fits?: readonly TargetStateName[]; rank?: number; explains?: readonly EvidenceKind[] } = {},
): Candidate {
  const entry = diagnosisEntry(diagnosis);
  // Every diagnosis a family names has a row (test/core/verdict-candidates.test.ts); `failing` is the weakest
  // honest reading of one that had none.
  const states = entry?.states ?? [];
  return {
    diagnosis,
    evidence: entry?.evidence ?? 'failing',
    rank: opts.rank ?? entry?.rank ?? 0,
    fits: opts.fits ?? states,
    cause,
    ...(opts.explains !== undefined ? { explains: opts.explains } : {}),
  };
}

/** Negative when `a` is stronger evidence than `b`: its kind, then how specific it is. */
export function compareCandidates(a: Candidate, b: Candidate): number {
  const k = EVIDENCE_KINDS.indexOf(a.evidence) - EVIDENCE_KINDS.indexOf(b.evidence);
  return k !== 0 ? k : b.rank - a.rank;
}

/**
 * The strongest of `candidates` that fits `state`, leaving out those a fitting candidate explains; the earliest
 * among equals (the registry's order).
 */
export function strongest(candidates: readonly Candidate[], state: TargetStateName): Candidate | undefined {
  const fit = candidates.filter((c) => c.fits.includes(state));
  const explained = new Set(fit.flatMap((c) => c.explains ?? []));
  let best: Candidate | undefined;
  for (const c of fit) {
    if (explained.has(c.evidence)) continue;
    if (best === undefined || compareCandidates(c, best) < 0) best = c;
  }
  return best;
}
