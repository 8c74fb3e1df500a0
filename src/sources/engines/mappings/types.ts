// One engine's /metrics mapping: which of its families fill which EngineSignal fields. Adding an engine is a
// new file in this folder plus one entry in ./index.ts.
import type { EngineSignal } from '../../../core/signals.js';
import type { Sample } from '../promtext.js';

export type EngineFields = Pick<
  EngineSignal,
  | 'running'
  | 'queued'
  | 'transferQueue'
  | 'preallocQueue'
  | 'finishedTotal'
  | 'generatedTokensTotal'
  | 'genThroughput'
  | 'tokenUsage'
  | 'abortedTotal'
  | 'kvTransferFailedTotal'
  | 'kvExpiredTotal'
  | 'preemptedTotal'
  | 'kvTransferLatencyMs'
  | 'kvTransferLatencySumMs'
  | 'kvTransferLatencyCount'
  | 'interTokenLatencySumSeconds'
  | 'interTokenLatencyCount'
  | 'queueTimeSumSeconds'
  | 'queueTimeCount'
  | 'sleeping'
  | 'workersHealthy'
  | 'workersUnhealthy'
  | 'circuitOpen'
  | 'routerInflight'
  | 'routerOldestInflightMs'
  | 'ranks'
>;

export interface EngineMapping {
  name: string;
  /**
   * Every family `map` reads: the scrape retains only these (an engine's other families, and whatever series a
   * user can make it export, are checked and dropped as they stream by). test/engines/retained.test.ts proves
   * each mapping reads the same from the retained samples as from all of them.
   */
  families: readonly string[];
  /** Every label name `map` (or `detect`) reads; the others are not retained. */
  labels: readonly string[];
  /** True when the scrape holds this engine's families. */
  detect(samples: Sample[]): boolean;
  map(samples: Sample[]): EngineFields;
}

type Filter = (s: Sample) => boolean;

/** Sum of the named families (the first name present wins: newer name first, older names as fallbacks). */
export function sumOf(samples: Sample[], names: string[], keep: Filter = () => true): number | undefined {
  for (const name of names) {
    let total: number | undefined;
    for (const s of samples) {
      if (s.name !== name || !Number.isFinite(s.value) || !keep(s)) continue;
      total = (total ?? 0) + s.value;
    }
    if (total !== undefined) return total;
  }
  return undefined;
}

/** Maximum over the series of the named families (first name present wins): ratios must not add up past 1. */
export function maxOf(samples: Sample[], names: string[], keep: Filter = () => true): number | undefined {
  for (const name of names) {
    let best: number | undefined;
    for (const s of samples) {
      if (s.name !== name || !Number.isFinite(s.value) || !keep(s)) continue;
      best = Math.max(best ?? -Infinity, s.value);
    }
    if (best !== undefined) return best;
  }
  return undefined;
}

export function add(...xs: Array<number | undefined>): number | undefined {
  const present = xs.filter((x): x is number => x !== undefined);
  return present.length === 0 ? undefined : present.reduce((a, b) => a + b, 0);
}
