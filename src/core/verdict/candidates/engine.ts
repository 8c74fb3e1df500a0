// The engine's own state, measured (EVIDENCE `engine`): its health check failing on a live server, running or queued
// work with no progress, its scheduler round trip hanging, one data-parallel rank stalled while its siblings work.
import type { TargetMemory } from '../../memory.js';
import { candidate } from '../pick.js';
import { withSymptom, stallText, why } from '../text.js';
import type { Candidate, Family } from '../types.js';

/**
 * The engine's own health check fails on a live server while completions fail or hang everywhere (SGLang's /health
 * generates one token: ./symptoms.ts cites it). A restart fixes it; not `down`.
 */
export const healthGenerateFailing: Family = (_s, _now, _cfg, sym) => {
  const h = sym.health;
  if (h === undefined || !sym.alive) return [];
  if (sym.healthGenerate)
    return [candidate('health_generate_failing', `${why(h)} while the server answers; completions fail too`)];
  if (sym.hungText !== undefined)
    return [candidate('health_generate_failing', `${sym.hungText}; ${why(h)} while the server answers`)];
  return [];
};

/**
 * Running or queued requests with no progress for stallAfter: a wedge while nothing passes or completions fail
 * everywhere, a degradation beside passes (gauges can freeze on an idle engine). A router's own stall while it is
 * stuck is that same finding, named by router_stuck. With completions stuck, a scheduler round trip that hangs too
 * (serverinfo) says the engine, not the path.
 */
export const engineStalled: Family = (s, now, _cfg, sym) => {
  const out: Candidate[] = [];
  const e = Object.values(s.engines).find(
    (x) => x.stalled && !(sym.stuckRouter !== undefined && x.routerInflight !== undefined),
  );
  // Beside a saturated engine, the text says the load is there and explains none of it (./saturation.ts).
  if (e !== undefined) {
    const b = sym.besideLoad;
    const beside = b !== undefined && b.service === e.service ? `, while ${b.load}` : '';
    out.push(candidate('engine_stalled', withSymptom(sym.wedgeText, `${stallText(e, now)}${beside}`)));
  }
  const serverinfo = sym.slots.find(
    (m) => m.probeKind === 'serverinfo' && m.failStreak >= 1 && m.last!.result === 'timeout',
  );
  if (serverinfo !== undefined && sym.stuck)
    out.push(
      candidate('engine_stalled', `${sym.wedgeText}; scheduler round trip hangs: ${why(serverinfo)}`, {
        fits: ['wedged'],
      }),
    );
  return out;
};

/** A data-parallel rank stalled while its siblings produce tokens (state/engines.ts judgeRanks). */
export const rankStalled: Family = (s, now) => {
  const text = stalledRank(s, now);
  return text !== undefined ? [candidate('rank_stalled', text)] : [];
};

function stalledRank(s: TargetMemory, now: number): string | undefined {
  for (const e of Object.values(s.engines)) {
    for (const [id, r] of Object.entries(e.ranks ?? {})) {
      if (!r.stalled) continue;
      const working = Object.entries(e.ranks ?? {})
        .filter(([other, o]) => other !== id && !o.stalled)
        .map(([other]) => other);
      return `${e.service} rank ${id} holds ${r.running} running requests with no tokens for ${Math.round((now - r.lastProgressAt) / 1000)} s while rank${working.length > 1 ? 's' : ''} ${working.join(', ')} progress`;
    }
  }
  return undefined;
}
