// Runs one load level as a warm-up trial then `repeat` counted trials. The warm-up is reported, not counted
// (caches, connection set-up, JIT), and flagged when it differs from the counted trials' median beyond
// WARMUP_BOUND: a first trial that slow or that fast says the deployment was not in a steady state.
import { trialFigures, medianOf, type TrialFigures } from './level-figures.js';
import { runLoad, type LoadOptions } from './load-run.js';
import type { Target } from './target.js';
import type { Slo } from './types.js';

/** How far (relative, on aggregate tokens/s) the warm-up may be from the counted trials' median unflagged. */
export const WARMUP_BOUND = 0.25;

export interface LevelTrials {
  warmup: TrialFigures;
  trials: TrialFigures[];
  /** Set when the warm-up differs from the counted trials beyond WARMUP_BOUND. */
  warmupFlag?: string;
}

export async function runTrials(
  target: Target,
  load: LoadOptions,
  repeat: number,
  slo: Slo | undefined,
  onTrial: (label: string, t: TrialFigures) => void = () => {},
): Promise<LevelTrials> {
  const warmup = trialFigures(await runLoad(target, { ...load, recordTokenTimes: true }), slo);
  onTrial('warm-up', warmup);
  const trials: TrialFigures[] = [];
  for (let i = 0; i < repeat; i++) {
    const t = trialFigures(await runLoad(target, { ...load, recordTokenTimes: true }), slo);
    trials.push(t);
    onTrial(`trial ${i + 1}/${repeat}`, t);
  }
  return { warmup, trials, warmupFlag: warmupFlag(warmup, trials) };
}

export function warmupFlag(warmup: TrialFigures, trials: readonly TrialFigures[]): string | undefined {
  const med = medianOf(trials.map((t) => t.aggTokS));
  if (!(med > 0) || !Number.isFinite(warmup.aggTokS)) return undefined;
  const d = warmup.aggTokS / med - 1;
  return Math.abs(d) > WARMUP_BOUND
    ? `warm-up ${warmup.aggTokS.toFixed(1)} tok/s is ${d >= 0 ? '+' : ''}${(d * 100).toFixed(0)}% from the trials' median ${med.toFixed(1)} (beyond ±${WARMUP_BOUND * 100}%): not a steady state`
    : undefined;
}
