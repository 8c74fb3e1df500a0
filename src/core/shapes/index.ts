// The verdict shapes of issue 26, strongest evidence first: the engine's own failure counters, then the engine's
// own state (a crawl, a leak floor), then the router's view; a half-failed pair before the down rules (its refused
// leg is the pair's failure, not a dead target); aborts counted by the engine are load evidence, asked with the
// abort storm. verdict.ts asks each tier in one place.
import type { ClassifierConfig, TargetState } from '../state/memory.js';
import { abortCounters, kvTransferFailing } from './counters.js';
import { engineCrawling } from './crawl.js';
import { queueLeakFloor } from './leak.js';
import { pdPairHalfFailed, requestsOrphaned } from './router.js';
import type { Shape, ShapeContext, ShapeVerdict } from './types.js';

export type { ShapeContext, ShapeVerdict } from './types.js';

export const SHAPES = {
  /** Asked before the down rules: a refused leg of a pair the router still holds requests for. */
  pair: [pdPairHalfFailed],
  /** Asked before the completions' own symptoms: counters, the engine's state, the router's view. */
  early: [kvTransferFailing, engineCrawling, queueLeakFloor, requestsOrphaned],
  /** Load evidence (EVIDENCE `load`): asked where the abort storm of the logs is, below answers and formats. */
  late: [abortCounters],
} as const satisfies Record<string, readonly Shape[]>;

/** The first shape of the tier the memory proves, if any. */
export function shapeVerdict(
  s: TargetState,
  now: number,
  cfg: ClassifierConfig,
  ctx: ShapeContext,
  tier: keyof typeof SHAPES = 'early',
): ShapeVerdict | undefined {
  for (const shape of SHAPES[tier] as readonly Shape[]) {
    const v = shape(s, now, cfg, ctx);
    if (v !== undefined) return v;
  }
  return undefined;
}
