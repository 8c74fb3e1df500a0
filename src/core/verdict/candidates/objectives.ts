// An engine that misses its objectives (EVIDENCE `engine`, issue 41 item 3; reduce/objectives.ts judges them):
// its inter-token latency over its objective for stallAfter (`engine_slow`: a uniform slowdown, or a crawl with no
// healthy past), and a queue that does not admit while tokens move on other requests (`queue_starved`). A stall
// (no tokens at all) and a crawl against the engine's own baseline are more specific, and are left to them.
import { ITL_CEILING_MS, type ObjectiveMemory } from '../../objective-memory.js';
import type { EngineMemory } from '../../memory.js';
import { candidate } from '../pick.js';
import type { Family } from '../types.js';

const ms = (x: number) => `${Math.round(x)} ms`;

export const queueStarved: Family = (s, _now, _cfg, sym) => {
  for (const e of Object.values(s.engines)) {
    const o = e.objectives;
    if (o?.starved !== true || e.stalled) continue;
    const w = o.starvedWhat!;
    return [
      candidate(
        'queue_starved',
        `${e.service} holds ${e.queued} queued request(s) for ${Math.round(w.heldMs / 1000)} s while ${w.finished} finished and tokens moved, and what left its queue waited ${ms(w.waitMs)} on average (its queue-time objective ${ms(o.queueMs)}): the queue does not admit${sym.stuck ? '; completions hang or fail' : ''}`,
      ),
    ];
  }
  return [];
};

// An engine's objective is learned once, from its first healthy window; our probes' is lowered by every quieter
// window of their runs (reduce/objectives.ts learnProbeObjective).
const fromText = (o: ObjectiveMemory, learned = 'its first healthy window') =>
  o.itlFrom === 'config'
    ? 'its configured objective'
    : o.itlFrom === 'learned'
      ? `its objective, learned from ${learned}`
      : `the ${ITL_CEILING_MS} ms ceiling: no healthy window since start-up`;

/**
 * An engine's own rate speaks instead of our probes' when it can judge: an objective configured, or an inter-token
 * latency it measures itself (vLLM's and SGLang's histograms) learned from a healthy window before our probes'
 * slowdown began. A rate made of counters over a scrape interval (llama.cpp's decode steps over the running count)
 * is no token rate on an engine idle but for our probes: a probe of 50 ms in a 15 s interval reads as a crawl, and
 * whether two scrapes both catch one running is chance. On the real 10× crawl such rates silenced engine_slow (ok
 * 32 s after it, then never degraded at all) while every chat run streamed 5–50× slower than its objective
 * (issue 38).
 */
function judgesOwnRate(e: EngineMemory, probes: ObjectiveMemory): boolean {
  const o = e.objectives;
  if (o?.lastItlMs === undefined) return false;
  if (o.itlFrom === 'config') return true;
  return (
    e.crawl?.lastItl !== undefined &&
    o.itlFrom === 'learned' &&
    o.itlLearnedAt !== undefined &&
    probes.slowSince !== undefined &&
    o.itlLearnedAt <= probes.slowSince
  );
}

/**
 * The engine's own rate first (its metrics); else our chat probes' streamed rate (an engine whose mapping has no
 * token rate, like llama.cpp's, is judged by what a user sees).
 */
export const engineSlow: Family = (s, now, _cfg, sym) => {
  const engines = Object.values(s.engines);
  if (engines.some((e) => e.stalled || e.crawl?.crawling === true)) return [];
  const tail = sym.stuck ? '; completions fail or hang' : '';
  for (const e of engines) {
    const o = e.objectives;
    if (o?.slow !== true) continue;
    return [
      candidate(
        'engine_slow',
        `${e.service}: inter-token latency ${ms(o.lastItlMs ?? 0)} over ${fromText(o)} (${ms(o.itlMs)}) for ${Math.round((now - o.slowSince!) / 1000)} s${tail}`,
      ),
    ];
  }
  const p = s.probeObjective;
  if (p?.slow === true && !engines.some((e) => judgesOwnRate(e, p)))
    return [
      candidate(
        'engine_slow',
        `chat probes stream a token every ${ms(p.lastItlMs ?? 0)}, over ${fromText(p, 'its quietest healthy runs')} (${ms(p.itlMs)}) for ${Math.round((now - p.slowSince!) / 1000)} s${tail}`,
      ),
    ];
  return [];
};
