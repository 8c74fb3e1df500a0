// Runs the selected steps in order against one target and assembles the report; the CLI and the tests call
// runVerify directly. Progress goes to a callback (the CLI writes it to stderr).
import {
  baselineSummary,
  compareBaseline,
  loadBaseline,
  saveResults,
  toSaved,
  type BaselineComparison,
} from './baseline.js';
import { accessSync, constants, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { STEPS, stepByName } from './registry.js';
import { preflight, type Target } from './target.js';
import { UsageError, type Slo, type StepResult } from './types.js';

export interface VerifyOptions {
  target: Target;
  metricsUrl?: string;
  logs?: string[];
  /** Step names in the order given; default every step in registry order. */
  steps?: string[];
  /** Per-step knob overrides, keyed by step name (already parsed values). */
  knobs?: Record<string, Record<string, unknown>>;
  baselinePath?: string;
  savePath?: string;
  /** Relative regression that fails the baseline check (0.1 = 10%). */
  regressionThreshold?: number;
  /** Latency changes smaller than this (seconds) never count as a regression. */
  latencyFloorS?: number;
  preflightTimeoutMs?: number;
  /** Counted trials per load level (default 5; each level also runs a warm-up trial). */
  repeat?: number;
  /** Goodput SLO (--slo). */
  slo?: Slo;
  /** Tail (p99) figures decide the comparison too (--gate-tails). */
  gateTails?: boolean;
  progress?: (line: string) => void;
}

/**
 * PASS: every step passed and (with --baseline) no figure regressed or straddled the threshold. FAIL: a step
 * failed or a figure REGRESSED. INCONCLUSIVE: the steps passed but some figure's interval straddles the
 * threshold: this run's noise cannot tell (its own exit code, EXIT_VERIFY.inconclusive).
 */
export type GateVerdict = 'PASS' | 'FAIL' | 'INCONCLUSIVE';

export interface VerifyReport {
  ok: boolean;
  verdict: GateVerdict;
  repeat: number;
  slo?: Slo;
  url: string;
  model: string;
  startedAt: string;
  durationMs: number;
  warnings: string[];
  steps: StepResult[];
  baseline?: BaselineComparison & { path: string; summary: string };
  savedTo?: string;
}

export function selectSteps(names: string[] | undefined) {
  if (!names || names.length === 0) return [...STEPS];
  return names.map((n) => {
    const s = stepByName(n);
    if (!s)
      throw new UsageError(
        `--steps: unknown step ${JSON.stringify(n)} (known: ${STEPS.map((x) => x.name).join(', ')})`,
      );
    return s;
  });
}

/** Fails before any traffic when --save could not be written, so a long run's results are not lost at the end. */
export function checkWritable(path: string): void {
  try {
    let isFile = false;
    try {
      isFile = statSync(path).isFile();
      if (!isFile) throw new Error('not a regular file');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    accessSync(isFile ? path : dirname(path), constants.W_OK);
  } catch (err) {
    throw new UsageError(`--save: cannot write ${path}: ${(err as Error).message}`);
  }
}

/** Throws UsageError (bad options) or TargetUnreachable (preflight) before any step runs. */
export async function runVerify(o: VerifyOptions): Promise<VerifyReport> {
  const steps = selectSteps(o.steps);
  for (const step of steps) step.check(o.knobs?.[step.name] ?? {});
  const baseline = o.baselinePath ? loadBaseline(o.baselinePath) : undefined;
  if (o.savePath) checkWritable(o.savePath);
  const threshold = o.regressionThreshold ?? 0.1;
  const repeat = o.repeat ?? 5;
  if (!Number.isInteger(repeat) || repeat < 1)
    throw new UsageError(`--repeat: expected an integer ≥ 1, got ${repeat}`);
  const t0 = performance.now();
  const startedAt = new Date().toISOString();
  const elapsed = () => `[${((performance.now() - t0) / 1000).toFixed(1).padStart(6)}s]`;
  const progress = o.progress ?? (() => {});
  const warnings: string[] = [];

  const pre = await preflight(o.target, o.preflightTimeoutMs);
  if (pre.warning) warnings.push(pre.warning);
  progress(
    `${elapsed()} target ${o.target.origin} answers ${o.target.modelsPath}${pre.warning ? ` (warning: ${pre.warning})` : ''}`,
  );

  const results: StepResult[] = [];
  for (const step of steps) {
    const s0 = performance.now();
    progress(`${elapsed()} ${step.name}: started`);
    let r: Omit<StepResult, 'step' | 'durationMs'>;
    try {
      r = await step.run(
        {
          target: o.target,
          metricsUrl: o.metricsUrl,
          logs: o.logs ?? [],
          repeat,
          slo: o.slo,
          progress: (line) => progress(`${elapsed()} ${step.name}: ${line}`),
        },
        o.knobs?.[step.name] ?? {},
      );
    } catch (err) {
      // A step that throws is a failed step with the reason, not a crashed gate.
      r = { ok: false, summary: `step error: ${(err as Error).message}`, details: [], figures: {} };
    }
    const result: StepResult = { step: step.name, ...r, durationMs: performance.now() - s0 };
    results.push(result);
    progress(
      `${elapsed()} ${step.name}: ${result.ok ? 'PASS' : 'FAIL'} in ${(result.durationMs / 1000).toFixed(1)}s — ${result.summary}`,
    );
  }

  let comparison: VerifyReport['baseline'];
  if (baseline && o.baselinePath) {
    const c = compareBaseline(baseline, results, threshold, o.latencyFloorS ?? 0.05, o.gateTails);
    comparison = { ...c, path: o.baselinePath, summary: baselineSummary(c) };
    progress(`${elapsed()} baseline: ${comparison.summary}`);
  }
  let saved = false;
  if (o.savePath) {
    try {
      saveResults(o.savePath, toSaved(o.target.url, o.target.model, results));
      saved = true;
      progress(`${elapsed()} results saved to ${o.savePath}`);
    } catch (err) {
      // The report still goes out; the run fails because the asked-for results file is missing.
      warnings.push(`could not save results to ${o.savePath}: ${(err as Error).message}`);
      progress(`${elapsed()} could not save results to ${o.savePath}: ${(err as Error).message}`);
    }
  }
  const stepsOk = results.every((r) => r.ok) && (saved || !o.savePath);
  const verdict: GateVerdict =
    !stepsOk || comparison?.verdict === 'REGRESSION'
      ? 'FAIL'
      : comparison?.verdict === 'INCONCLUSIVE'
        ? 'INCONCLUSIVE'
        : 'PASS';
  return {
    ok: verdict === 'PASS',
    verdict,
    repeat,
    slo: o.slo,
    url: o.target.url,
    model: o.target.model,
    startedAt,
    durationMs: performance.now() - t0,
    warnings,
    steps: results,
    baseline: comparison,
    savedTo: saved ? o.savePath : undefined,
  };
}
