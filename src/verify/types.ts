// The contract between the verify runner and its steps: each step is one file exporting a StepDef, listed in
// registry.ts. A step gets the target and its knobs, reports progress lines, and returns a result with figures.
import type { Target } from './target.js';

/** A figure a later run can be compared with (baseline.ts); `better` says which direction is an improvement. */
export interface Figure {
  /** The median over trials (or the one measurement). */
  value: number;
  unit: 's' | 'tok/s' | 'req/s';
  better: 'higher' | 'lower';
  /** Each counted trial's value (warm-up excluded): what the comparison's interval is computed from. */
  trials?: number[];
  /**
   * A tail figure (p99): compared and shown, but it decides the gate only with --gate-tails (the p99 of a few
   * requests is one scheduler hiccup; docs/decisions.md).
   */
  tail?: boolean;
}

export interface StepResult {
  step: string;
  ok: boolean;
  /** One line for the summary table. */
  summary: string;
  /** Detail lines printed under the table (throughput levels, figures, the traceback found). */
  details: string[];
  /** Comparable figures, keyed for the baseline (e.g. "c32.agg_tok_s"). */
  figures: Record<string, Figure>;
  /** Step-specific structured data for --json. */
  data?: unknown;
  /** What the results file keeps of this step beyond its figures (the HTML report's charts read it). */
  saved?: unknown;
  durationMs: number;
}

export interface StepContext {
  target: Target;
  /** Engine /metrics URL (sglang:num_running_reqs), if given. */
  metricsUrl?: string;
  /** Engine log files to scan (Decode batch lines, critical signatures). */
  logs: string[];
  /** One line per completed sub-phase; the runner prefixes the step name and elapsed time. */
  progress(line: string): void;
  /** Counted trials per load level (--repeat; a warm-up trial runs before them). */
  repeat: number;
  /** Service-level objectives for goodput (--slo), seconds. */
  slo?: Slo;
}

/** `--slo ttft=2s,tpot=50ms`: a request meets it when every given bound holds (vllm bench serve's goodput). */
export interface Slo {
  ttftS?: number;
  tpotS?: number;
  e2elS?: number;
}

export type KnobKind = 'int' | 'duration' | 'levels' | 'ratio';

/** One knob of a step: its flag (--<prefix>.<flag>), how its text is parsed, its default and its help. */
export interface KnobSpec<V = unknown> {
  /** The part after the step's flag prefix: --<prefix>.<flag>. */
  flag: string;
  kind: KnobKind;
  default: V;
  help: string;
}

/** Every field of a step's knobs has exactly one knob, its default of the field's type (knob-specs.ts). */
export type KnobTable<K> = { [P in keyof K]: KnobSpec<K[P]> };

export interface StepDef<K> {
  name: string;
  /** CLI flag prefix for the knobs (e.g. "abort" for --abort.sessions). */
  flagPrefix: string;
  summary: string;
  knobs: KnobTable<K>;
  /** Refuses knobs that make no sense together (a UsageError), before any traffic. */
  check?(knobs: K): void;
  run(ctx: StepContext, knobs: K): Promise<Omit<StepResult, 'step' | 'durationMs'>>;
}

/** A step with its knob type erased, so steps of different knob types share one registry. */
export interface AnyStep {
  name: string;
  flagPrefix: string;
  summary: string;
  defaults: Record<string, unknown>;
  knobs: (KnobSpec & { key: string })[];
  check(knobs: Record<string, unknown>): void;
  run(ctx: StepContext, knobs: Record<string, unknown>): Promise<Omit<StepResult, 'step' | 'durationMs'>>;
}

export function defineStep<K extends object>(def: StepDef<K>): AnyStep {
  const knobs = Object.entries(def.knobs as Record<string, KnobSpec>).map(([key, spec]) => ({
    key,
    ...spec,
  }));
  const defaults = Object.fromEntries(knobs.map((k) => [k.key, k.default]));
  // The runner merges user knobs over the defaults after parsing each with its KnobSpec kind, so the shape is K.
  const merged = (given: Record<string, unknown>) => ({ ...defaults, ...given }) as K;
  return {
    name: def.name,
    flagPrefix: def.flagPrefix,
    summary: def.summary,
    defaults,
    knobs,
    check: (given) => def.check?.(merged(given)),
    run: (ctx, given) => def.run(ctx, merged(given)),
  };
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
