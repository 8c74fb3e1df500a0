// Saved results and the regression check: --save writes a run's figures; --baseline compares a run's throughput
// and latency figures with them and fails on a regression beyond the threshold. Latency changes smaller than an
// absolute floor are ignored, so scheduler jitter on a fast target cannot fail the gate.
import { readFileSync, writeFileSync } from 'node:fs';
import type { Figure, StepResult } from './types.js';
import { UsageError } from './types.js';

export const RESULTS_KIND = 'wedgewatch-verify-results';

export interface SavedResults {
  kind: typeof RESULTS_KIND;
  version: 1;
  savedAt: string;
  url: string;
  model: string;
  steps: { step: string; ok: boolean; summary: string; figures: Record<string, Figure> }[];
}

export interface Delta {
  key: string;
  unit: Figure['unit'];
  baseline: number;
  current: number;
  /** (current - baseline) / baseline. */
  change: number;
  regression: boolean;
}

export interface BaselineComparison {
  ok: boolean;
  threshold: number;
  deltas: Delta[];
  regressions: number;
  /** Figures in the baseline this run did not produce (different steps or levels). */
  missing: string[];
}

export function toSaved(url: string, model: string, steps: StepResult[], now = new Date()): SavedResults {
  return {
    kind: RESULTS_KIND,
    version: 1,
    savedAt: now.toISOString(),
    url,
    model,
    steps: steps.map((s) => ({ step: s.step, ok: s.ok, summary: s.summary, figures: s.figures })),
  };
}

export function saveResults(path: string, saved: SavedResults): void {
  writeFileSync(path, JSON.stringify(saved, null, 2) + '\n');
}

export function loadBaseline(path: string): SavedResults {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new UsageError(`--baseline ${path}: ${(err as Error).message}`);
  }
  const b = parsed as Partial<SavedResults>;
  if (b?.kind !== RESULTS_KIND || b.version !== 1 || !Array.isArray(b.steps)) {
    throw new UsageError(`--baseline ${path}: not a results file written by 'wedgewatch verify --save'`);
  }
  return b as SavedResults;
}

export function compareBaseline(
  baseline: SavedResults,
  current: StepResult[],
  threshold: number,
  latencyFloorS: number,
): BaselineComparison {
  const deltas: Delta[] = [];
  const missing: string[] = [];
  for (const bs of baseline.steps) {
    const cs = current.find((s) => s.step === bs.step);
    for (const [name, bf] of Object.entries(bs.figures ?? {})) {
      const key = `${bs.step}.${name}`;
      const cf = cs?.figures[name];
      if (!cs) continue; // step not run this time: nothing to compare, not a regression
      if (!cf || !(bf.value > 0)) {
        missing.push(key);
        continue;
      }
      const change = (cf.value - bf.value) / bf.value;
      const worse = bf.better === 'higher' ? -change : change;
      const floorOk = bf.unit === 's' && Math.abs(cf.value - bf.value) < latencyFloorS;
      deltas.push({
        key,
        unit: bf.unit,
        baseline: bf.value,
        current: cf.value,
        change,
        regression: worse > threshold && !floorOk,
      });
    }
  }
  const regressions = deltas.filter((d) => d.regression).length;
  return { ok: regressions === 0 && deltas.length > 0, threshold, deltas, regressions, missing };
}

export function formatDelta(d: Delta): string {
  const v = (x: number) => (d.unit === 's' ? `${x.toFixed(3)}s` : `${x.toFixed(1)} tok/s`);
  const pct = `${d.change >= 0 ? '+' : ''}${(d.change * 100).toFixed(1)}%`;
  return `${d.regression ? 'REGRESSION' : 'ok        '} ${d.key.padEnd(34)} ${v(d.baseline).padStart(14)} -> ${v(d.current).padStart(14)}  ${pct}`;
}

export function baselineSummary(c: BaselineComparison): string {
  if (c.deltas.length === 0)
    return 'no figure in common with the baseline (run the throughput/liveness steps it was saved with)';
  const worst = [...c.deltas]
    .filter((d) => d.regression)
    .sort((a, b) => Math.abs(b.change) - Math.abs(a.change))[0];
  return c.regressions
    ? `${c.regressions}/${c.deltas.length} figures regressed beyond ${(c.threshold * 100).toFixed(0)}% (worst ${worst!.key} ${(worst!.change * 100).toFixed(1)}%)`
    : `${c.deltas.length} figures within ${(c.threshold * 100).toFixed(0)}% of the baseline`;
}
