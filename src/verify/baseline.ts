// Saved results and the regression check: --save writes a run's figures; --baseline compares a run's throughput
// and latency figures with them and fails on a regression beyond the threshold. Latency changes smaller than an
// absolute floor are ignored, so scheduler jitter on a fast target cannot fail the gate.
import { readFileSync, writeFileSync } from 'node:fs';
import { compareFigure, overallVerdict, type FigureComparison, type FigureVerdict } from './compare.js';
import type { Figure, StepResult } from './types.js';
import { UsageError } from './types.js';

export const RESULTS_KIND = 'wedgewatch-verify-results';

export interface SavedResults {
  kind: typeof RESULTS_KIND;
  /** 2 adds per-trial values to each figure; 1 (single values) is still read. */
  version: 1 | 2;
  savedAt: string;
  url: string;
  model: string;
  steps: {
    step: string;
    ok: boolean;
    summary: string;
    durationMs?: number;
    figures: Record<string, Figure>;
    saved?: unknown;
  }[];
}

export interface BaselineComparison {
  /** Any figure REGRESSION, else any INCONCLUSIVE, else PASS (nothing in common: INCONCLUSIVE). */
  verdict: FigureVerdict;
  ok: boolean;
  threshold: number;
  figures: FigureComparison[];
  regressions: number;
  inconclusive: number;
  /** Figures in the baseline this run did not produce (different steps or levels). */
  missing: string[];
}

/**
 * The figures a results file keeps of a step: none of a failed step (its figures describe a broken run — a
 * usage count past max_tokens, a level full of errors — and a later run compared with them would be judged
 * against that), and only finite values of a passed one.
 */
export function keptFigures(s: Pick<StepResult, 'ok' | 'figures'>): Record<string, Figure> {
  if (!s.ok) return {};
  return Object.fromEntries(
    Object.entries(s.figures).filter(
      ([, f]) => Number.isFinite(f.value) && (f.trials ?? []).every((v) => Number.isFinite(v)),
    ),
  );
}

export function toSaved(url: string, model: string, steps: StepResult[], now = new Date()): SavedResults {
  return {
    kind: RESULTS_KIND,
    version: 2,
    savedAt: now.toISOString(),
    url,
    model,
    steps: steps.map((s) => ({
      step: s.step,
      ok: s.ok,
      summary: s.summary,
      durationMs: s.durationMs,
      figures: keptFigures(s),
      ...(s.saved !== undefined ? { saved: s.saved } : {}),
    })),
  };
}

export function saveResults(path: string, saved: SavedResults | object): void {
  writeFileSync(path, JSON.stringify(saved, null, 2) + '\n');
}

export function loadBaseline(path: string, flag = '--baseline'): SavedResults {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new UsageError(`${flag} ${path}: ${(err as Error).message}`);
  }
  const b = parsed as Partial<SavedResults>;
  if (b?.kind !== RESULTS_KIND || (b.version !== 1 && b.version !== 2) || !Array.isArray(b.steps)) {
    throw new UsageError(`${flag} ${path}: not a results file written by 'wedgewatch verify --save'`);
  }
  return b as SavedResults;
}

/** Compares the figures of two runs (saved or current), step by step. */
export function compareBaseline(
  baseline: Pick<SavedResults, 'steps'>,
  current: readonly { step: string; figures: Record<string, Figure> }[],
  threshold: number,
  latencyFloorS: number,
  gateTails = false,
): BaselineComparison {
  const figures: FigureComparison[] = [];
  const missing: string[] = [];
  for (const bs of baseline.steps) {
    const cs = current.find((s) => s.step === bs.step);
    if (!cs) continue; // step not run this time: nothing to compare, not a regression
    for (const [name, bf] of Object.entries(bs.figures ?? {})) {
      const key = `${bs.step}.${name}`;
      const cf = cs.figures[name];
      const c = cf ? compareFigure(key, bf, cf, { threshold, latencyFloorS, gateTails }) : undefined;
      if (c) figures.push(c);
      else missing.push(key);
    }
  }
  const regressions = figures.filter((d) => d.gating && d.verdict === 'REGRESSION').length;
  const inconclusive = figures.filter((d) => d.gating && d.verdict === 'INCONCLUSIVE').length;
  const verdict = figures.length === 0 ? 'INCONCLUSIVE' : overallVerdict(figures);
  return { verdict, ok: verdict === 'PASS', threshold, figures, regressions, inconclusive, missing };
}

export function baselineSummary(c: BaselineComparison): string {
  if (c.figures.length === 0)
    return 'no figure in common with the baseline (run the throughput/liveness steps it was saved with)';
  const th = `${(c.threshold * 100).toFixed(0)}%`;
  const worst = (v: FigureVerdict) =>
    [...c.figures]
      .filter((d) => d.gating && d.verdict === v)
      .sort((a, b) => Math.abs(b.ratio - 1) - Math.abs(a.ratio - 1))[0];
  const pct = (r: number) => `${r >= 1 ? '+' : ''}${((r - 1) * 100).toFixed(1)}%`;
  const detect = c.figures
    .filter((f) => f.gating)
    .map((f) => f.mde)
    .filter(Number.isFinite);
  const mde = detect.length
    ? `; a regression beyond ${(Math.min(...detect) * 100).toFixed(1)}% (best figure) to ${(Math.max(...detect) * 100).toFixed(1)}% would have been detected`
    : '';
  const gating = c.figures.filter((f) => f.gating).length;
  if (c.verdict === 'REGRESSION') {
    const w = worst('REGRESSION')!;
    return `REGRESSION: ${c.regressions}/${gating} gating figures regressed beyond ${th} with 95% confidence (worst ${w.key} ${pct(w.ratio)} [${pct(w.lo)}, ${pct(w.hi)}])`;
  }
  if (c.verdict === 'INCONCLUSIVE') {
    const w = worst('INCONCLUSIVE')!;
    return `INCONCLUSIVE: ${c.inconclusive}/${gating} gating figures' intervals straddle ${th} (e.g. ${w.key} ${pct(w.ratio)}: ${w.why}); rerun with more --repeat${mde}`;
  }
  return `PASS: ${gating} gating figures within ${th} of the baseline with 95% confidence${mde}`;
}
