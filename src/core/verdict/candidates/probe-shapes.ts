// The candidates for the probes shaped like the traffic that breaks (issue 28, EVIDENCE `path`): a long prompt that
// fails while short completions pass is the engine's long-context path (prefill, chunked prefill, a KV transfer of
// many blocks), not the engine; a conversation that stalls or slows round by round over one connection while single
// completions pass is the growing context on a reused connection (a proxy, a prefix cache, a kernel). Both are
// degraded: the deployment serves, not all of it. Pure, like the rest of the core.
import type { ClassifierConfig, SlotMemory } from '../../memory.js';
import { candidate } from '../pick.js';
import { label, why } from '../text.js';
import type { Candidate, Family } from '../types.js';

/** The round a conversation's failure names ("round 3 of 4" in its error), if any. */
export function failedRound(m: SlotMemory): string | undefined {
  return /\bround (\d+) of (\d+)\b/.exec(m.last?.error ?? '')?.[0];
}

/**
 * When every failing completion slot is a long-input (or every one a conversation) probe and a completion of
 * another kind passes: that shape's diagnosis, with the length or the round. Undefined otherwise (the other
 * candidates decide).
 */
export function probeShapeCandidate(
  failing: readonly SlotMemory[],
  passing: readonly SlotMemory[],
  cfg: ClassifierConfig,
): Candidate | undefined {
  if (failing.length === 0) return undefined;
  const short = (kinds: readonly string[]) => passing.find((m) => !kinds.includes(m.probeKind));
  if (failing.every((m) => m.probeKind === 'longinput')) {
    const other = short(['longinput', 'conversation']);
    if (other === undefined) return undefined;
    const f = failing[0]!;
    const tokens = cfg.probes[f.probe]?.promptTokens;
    return candidate(
      'long_context_failing',
      `${why(f)}; ${tokens !== undefined ? `${tokens}-token prompts` : 'long prompts'} fail while ${label(other)} passes`,
    );
  }
  if (failing.every((m) => m.probeKind === 'conversation')) {
    const other = short(['conversation']);
    if (other === undefined) return undefined;
    const f = failing[0]!;
    const round = failedRound(f);
    const rounds = cfg.probes[f.probe]?.rounds;
    return candidate(
      'conversation_stalls',
      `${why(f)}; ${round !== undefined ? `the conversation stalls at ${round}` : `a conversation of ${rounds ?? 'several'} rounds stalls`} on a ${f.conn} connection while ${label(other)} passes`,
    );
  }
  return undefined;
}

export const probeShapes: Family = (_s, _now, cfg, sym) => {
  const c = probeShapeCandidate(sym.failing, sym.passing, cfg);
  return c !== undefined ? [c] : [];
};
