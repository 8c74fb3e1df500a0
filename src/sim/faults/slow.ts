// Every forward step takes `factor` times longer (a throttled GPU, a bad kernel, a too-large batch).
import type { FaultDef } from './types.js';

export const slow: FaultDef = {
  name: 'slow',
  engines: ['sglang', 'vllm'],
  summary: 'decode steps and prefill forwards take `factor` times longer',
  params: { factor: { default: 2, help: 'how many times longer each step takes, 1 to 1000' } },
  validate(p) {
    const f = Number(p.factor);
    return Number.isFinite(f) && f >= 1 && f <= 1000 ? undefined : `factor must be a number from 1 to 1000`;
  },
  stepFactor(p) {
    return Number(p.factor);
  },
};
