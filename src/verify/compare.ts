// The noise-aware before/after comparison: for every figure both runs have, the after/before ratio with its 95 %
// interval over the trials (hodges-lehmann.ts), a verdict against the threshold, and the minimum detectable
// effect at this run's noise. REGRESSION only when the whole interval lies past the threshold, INCONCLUSIVE
// when it straddles it, PASS when the whole interval is on the good side.
import { ratioInterval, type RatioInterval } from './hodges-lehmann.js';
import type { Figure } from './types.js';

export type FigureVerdict = 'PASS' | 'INCONCLUSIVE' | 'REGRESSION';
export const FIGURE_VERDICTS: readonly FigureVerdict[] = ['PASS', 'INCONCLUSIVE', 'REGRESSION'];

export interface FigureComparison extends RatioInterval {
  key: string;
  unit: Figure['unit'];
  better: Figure['better'];
  verdict: FigureVerdict;
  /** Why, in a few words (e.g. "interval past -10%", "below the 50 ms floor"). */
  why: string;
  /**
   * The smallest regression (a fraction, 0.12 = 12 %) whose interval would lie wholly past the threshold at this
   * run's spread; Infinity when too few trials give no interval.
   */
  mde: number;
  trials: { before: number; after: number };
  /** Whether this figure decides the gate (tails do only with --gate-tails). */
  gating: boolean;
}

export interface ComparisonOptions {
  threshold: number;
  /** Latency changes smaller than this (seconds) never count against the gate. */
  latencyFloorS: number;
  /** Tail (p99) figures decide the gate too. */
  gateTails?: boolean;
}

function trialsOf(f: Figure): number[] {
  return f.trials && f.trials.length > 0 ? f.trials : [f.value];
}

/** Compares one figure; undefined when the before values cannot anchor a ratio (zero or missing). */
export function compareFigure(
  key: string,
  before: Figure,
  after: Figure,
  o: ComparisonOptions,
): FigureComparison | undefined {
  const b = trialsOf(before).filter(Number.isFinite);
  const a = trialsOf(after).filter(Number.isFinite);
  if (b.length === 0 || a.length === 0 || b.some((x) => !(x > 0))) return undefined;
  const ci = ratioInterval(b, a);
  const t = o.threshold;
  const higher = before.better === 'higher';
  // The interval's worse and better ends, as ratios.
  const worse = higher ? ci.lo : ci.hi;
  const better = higher ? ci.hi : ci.lo;
  const limit = higher ? 1 - t : 1 + t;
  const past = (r: number) => (higher ? r < limit : r > limit);
  // The floor: an absolute latency change that small is scheduler noise, whatever its ratio.
  const floorRatio = before.unit === 's' && o.latencyFloorS > 0 ? o.latencyFloorS / ci.before : 0;
  const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
  let verdict: FigureVerdict;
  let why: string;
  if (ci.level === 0) {
    verdict = 'INCONCLUSIVE';
    why = `too few trials for a 95% interval (${b.length} before, ${a.length} after)`;
  } else if (floorRatio > 0 && Math.abs(worse - 1) < floorRatio) {
    verdict = 'PASS';
    why = `change below the ${(o.latencyFloorS * 1000).toFixed(0)} ms floor`;
  } else if (past(better) && Math.abs(better - 1) >= floorRatio) {
    verdict = 'REGRESSION';
    why = `interval wholly past ${pct(limit - 1)}`;
  } else if (past(worse)) {
    verdict = 'INCONCLUSIVE';
    why = `interval straddles ${pct(limit - 1)}`;
  } else {
    verdict = 'PASS';
    why = `interval within ${pct(limit - 1)}`;
  }
  // A true ratio ρ shifts the interval to ρ·[lo, hi]/ratio: detected once its better end passes the limit.
  let mde = Infinity;
  if (ci.level > 0 && better > 0 && Number.isFinite(better)) {
    mde = higher ? 1 - (limit * ci.ratio) / better : (limit * ci.ratio) / better - 1;
    mde = Math.max(mde, t, floorRatio);
  }
  return {
    key,
    unit: before.unit,
    better: before.better,
    ...ci,
    verdict,
    why,
    mde,
    trials: { before: b.length, after: a.length },
    gating: !(before.tail === true || after.tail === true) || o.gateTails === true,
  };
}

/** The gate's verdict over figures: any REGRESSION, else any INCONCLUSIVE, else PASS. */
export function overallVerdict(
  figures: readonly { verdict: FigureVerdict; gating?: boolean }[],
): FigureVerdict {
  const gating = figures.filter((f) => f.gating !== false);
  if (gating.some((f) => f.verdict === 'REGRESSION')) return 'REGRESSION';
  if (gating.some((f) => f.verdict === 'INCONCLUSIVE')) return 'INCONCLUSIVE';
  return 'PASS';
}

export function formatComparison(c: FigureComparison): string {
  const v = (x: number) => (c.unit === 's' ? `${x.toFixed(3)}s` : `${x.toFixed(1)}`);
  const pct = (r: number) =>
    Number.isFinite(r) ? `${r - 1 >= 0 ? '+' : ''}${((r - 1) * 100).toFixed(1)}%` : r > 0 ? '+∞' : '-∞';
  const mde = Number.isFinite(c.mde) ? `${(c.mde * 100).toFixed(1)}%` : 'none (more trials)';
  return (
    `${c.verdict.padEnd(12)} ${c.key.padEnd(40)} ${v(c.before).padStart(10)} -> ${v(c.after).padStart(10)}  ` +
    `${pct(c.ratio).padStart(7)} [${pct(c.lo)}, ${pct(c.hi)}]  detects >${mde}  (${c.why}${c.gating ? '' : '; tail, not gating'})`
  );
}
