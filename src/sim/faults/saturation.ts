// Busy, not broken (issue 41 item 9, issue 38): the scheduler runs at most `slots` requests at once
// (vLLM --max-num-seqs; llama.cpp --parallel), the rest wait in its queue (vllm/v1/core/sched/scheduler.py
// schedule(): `while self.waiting and token_budget > 0: if len(self.running) == self.max_num_seqs: break`).
// With long generations holding every slot, a probe waits its turn: tokens flow, the queue grows, nothing is
// wedged. The load itself comes from clients (bench/saturation.mjs, the fault matrix's plan).
import type { FaultDef } from './types.js';

export const saturation: FaultDef = {
  name: 'saturation',
  engines: ['vllm'],
  summary:
    'the scheduler runs at most `slots` requests at once; the rest wait (drive it with long generations)',
  params: {
    slots: { default: 4, help: 'requests running at once (--max-num-seqs / --parallel)' },
  },
  validate(params) {
    const n = Number(params.slots);
    return Number.isInteger(n) && n >= 1
      ? undefined
      : `slots must be an integer ≥ 1 (got ${JSON.stringify(params.slots)})`;
  },
  maxRunning(params) {
    return Number(params.slots);
  },
};
