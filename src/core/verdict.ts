// The verdict for a target's current memory, before hysteresis: which state the evidence points at, with a diagnosis
// from a small fixed vocabulary (a metric label) and a cause a person can read. First the symptoms and the state they
// make (src/core/shapes/state.ts); then every candidate family's diagnoses (src/core/shapes/index.ts), and the one
// named from the strongest evidence that fits the state (EVIDENCE in vocabulary.ts, then the most specific).
import { countsForRecovery, type Diagnosis, wedgeCauses } from './vocabulary.js';
import { isCompletion } from './kinds.js';
import { strongest } from './shapes/candidate.js';
import { FAMILIES, type Candidate } from './shapes/index.js';
import { stateOf } from './shapes/state.js';
import { symptomsOf } from './shapes/symptoms.js';
import { wrongHeld } from './wrong-window.js';
import type { ClassifierConfig, TargetState, TargetStateName } from './state/memory.js';

/** The causes a wedge can have in full (log:<rule> causes come from critical rules outside the NIXL one). */
export const WEDGE_CAUSES: readonly string[] = wedgeCauses();

export interface Verdict {
  state: TargetStateName;
  diagnosis: Diagnosis | null;
  cause: string;
  /** For `ok`: no slot is part-way into a failure streak (unknown → ok waits for that). */
  clean: boolean;
}

export function evaluate(s: TargetState, now: number, cfg: ClassifierConfig): Verdict {
  const sym = symptomsOf(s, now, cfg);
  const candidates: Candidate[] = [];
  for (const family of FAMILIES) for (const c of family(s, now, cfg, sym)) candidates.push(c);
  const state = stateOf(sym, candidates);
  if (state !== undefined) {
    // Every rule of stateOf has a family that names it (test/core/verdict-candidates.test.ts).
    const best = strongest(candidates, state);
    return {
      state,
      diagnosis: best?.diagnosis ?? null,
      cause: best?.cause ?? sym.wedgeText ?? 'no diagnosis fits',
      clean: true,
    };
  }
  if (sym.slots.length === 0)
    return { state: 'unknown', diagnosis: null, cause: 'no probe result yet', clean: false };
  // Health answering is not the truth: with completion probes configured, ok waits for one to finish.
  const completionConfigured = Object.values(cfg.probes).some((p) => isCompletion(p.kind));
  if (completionConfigured && sym.completion.length === 0)
    return { state: 'unknown', diagnosis: null, cause: 'no completion probe has finished yet', clean: false };
  // A slot inside its wrong-answer window is not clean, whatever its last answer (wrong-window.ts).
  const clean = sym.slots
    .filter((m) => countsForRecovery(m.probeKind))
    .every((m) => m.failStreak === 0 && m.leakStreak === 0 && !wrongHeld(m));
  return { state: 'ok', diagnosis: null, cause: 'completions finish on every probed hop', clean };
}
