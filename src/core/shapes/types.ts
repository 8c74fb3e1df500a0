// The contract of a verdict shape (issue 26): one function per shape of evidence, reading the reducer's memory and
// returning the state, diagnosis and cause it proves, or nothing. verdict.ts asks them in one place, in the order
// of ./index.ts.
import type { Diagnosis, TargetStateName } from '../vocabulary.js';
import type { ClassifierConfig, TargetState } from '../state/memory.js';

/** What the verdict knows of the completions when it asks the shapes. */
export interface ShapeContext {
  /** Some completion slot passes (its last run finished). */
  passing: boolean;
  /** Completions fail on every slot, or one has hung with nothing finished since: the deployment serves nothing. */
  stuck: boolean;
}

export interface ShapeVerdict {
  state: TargetStateName;
  diagnosis: Diagnosis;
  cause: string;
}

export type Shape = (
  s: TargetState,
  now: number,
  cfg: ClassifierConfig,
  ctx: ShapeContext,
) => ShapeVerdict | undefined;

/** Degraded while completions pass, wedged when they fail or hang too. */
export const stateFor = (ctx: ShapeContext): TargetStateName => (ctx.stuck ? 'wedged' : 'degraded');
