// The verdict shapes of issue 26, strongest evidence first: the engine's own failure counters, then the engine's
// own state (a crawl, a leak floor), then the router's view. verdict.ts asks them in this order, once.
import type { ClassifierConfig, TargetState } from '../state/memory.js';
import { abortCounters, kvTransferFailing } from './counters.js';
import { engineCrawling } from './crawl.js';
import { queueLeakFloor } from './leak.js';
import { pdPairHalfFailed, requestsOrphaned } from './router.js';
import type { Shape, ShapeContext, ShapeVerdict } from './types.js';

export type { ShapeContext, ShapeVerdict } from './types.js';

export const SHAPES: readonly Shape[] = [
  kvTransferFailing,
  abortCounters,
  engineCrawling,
  queueLeakFloor,
  pdPairHalfFailed,
  requestsOrphaned,
];

/** The first shape the memory proves, if any. */
export function shapeVerdict(
  s: TargetState,
  now: number,
  cfg: ClassifierConfig,
  ctx: ShapeContext,
): ShapeVerdict | undefined {
  for (const shape of SHAPES) {
    const v = shape(s, now, cfg, ctx);
    if (v !== undefined) return v;
  }
  return undefined;
}
