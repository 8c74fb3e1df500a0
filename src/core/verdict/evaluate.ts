// The verdict for a target's current memory, before hysteresis: which state the evidence points at, with a diagnosis
// from a small fixed vocabulary (a metric label) and a cause a person can read. First the symptoms and the state they
// make (src/core/verdict/state-of.ts); then every candidate family's diagnoses (src/core/verdict/families.ts), and the one
// named from the strongest evidence that fits the state (EVIDENCE in vocabulary.ts, then the most specific).
import { countsForRecovery, type Diagnosis, wedgeCauses } from '../vocabulary.js';
import { isCompletion } from '../vocabulary.js';
import { strongest } from './pick.js';
import { FAMILIES, type Candidate } from './families.js';
import { stateOf } from './state-of.js';
import { symptomsOf } from './symptoms.js';
import { nodeNote } from './candidates/node.js';
import { wrongHeld } from '../wrong-window.js';
import type { ClassifierConfig, TargetMemory } from '../memory.js';
import type { TargetStateName } from '../vocabulary.js';

/** The causes a wedge can have in full (log:<rule> causes come from critical rules outside the NIXL one). */
export const WEDGE_CAUSES: readonly string[] = wedgeCauses();

export interface Verdict {
  state: TargetStateName;
  diagnosis: Diagnosis | null;
  cause: string;
  /** For `ok`: no slot is part-way into a failure streak (unknown → ok waits for that). */
  clean: boolean;
}

export function evaluate(s: TargetMemory, now: number, cfg: ClassifierConfig): Verdict {
  const sym = symptomsOf(s, now, cfg);
  const candidates: Candidate[] = [];
  for (const family of FAMILIES) for (const c of family(s, now, cfg, sym)) candidates.push(c);
  const state = stateOf(sym, candidates);
  if (state !== undefined) {
    // Every rule of stateOf has a family that names it (test/core/verdict-candidates.test.ts).
    const best = strongest(candidates, state);
    const cause = best?.cause ?? sym.wedgeText ?? 'no diagnosis fits';
    // What the node saw beside it (a thread lost, the stacks at the wedge): issue 42.
    const node = nodeNote(s, now, cfg, sym, best?.diagnosis ?? null);
    return {
      state,
      diagnosis: best?.diagnosis ?? null,
      cause: node !== undefined ? `${cause}; ${node}` : cause,
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
