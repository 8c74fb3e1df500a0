// The verify steps in the order they run by default. A new step is a new file plus one entry here.
import { abortCascadeStep } from './abort-cascade.js';
import { batchingStep } from './batching.js';
import { conversationStep } from './conversation.js';
import { correctnessStep } from './correctness.js';
import { livenessStep } from './liveness.js';
import { longContextStep } from './long-context.js';
import { throughputStep } from './throughput.js';
import { toolcallStep } from './toolcall.js';
import type { AnyStep } from './types.js';

export const STEPS: readonly AnyStep[] = [
  livenessStep,
  throughputStep,
  longContextStep,
  conversationStep,
  batchingStep,
  // Before abort-cascade, which may leave a broken deployment behind it.
  correctnessStep,
  abortCascadeStep,
  toolcallStep,
];

export const STEP_NAMES = STEPS.map((s) => s.name);

export function stepByName(name: string): AnyStep | undefined {
  return STEPS.find((s) => s.name === name);
}
