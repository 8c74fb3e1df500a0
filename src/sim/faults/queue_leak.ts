// Prefill's bootstrap queue leaks entries: requests whose decode side went away are never popped, so
// `sglang:num_prefill_bootstrap_queue_reqs` (the simulator exports the older prealloc name) stays above zero while
// the scheduler runs nothing and completions pass. Slots leak for hours before the pool runs dry (issue 13).
import type { FaultDef } from './types.js';

export const queueLeak: FaultDef = {
  name: 'queue_leak',
  summary: "prefill's bootstrap queue gauge holds leaked entries while nothing runs; completions still pass",
  params: {
    count: { default: 4, help: 'leaked entries the bootstrap queue shows (1 or more)' },
  },
  validate(params) {
    const n = Number(params.count);
    return Number.isInteger(n) && n >= 1
      ? undefined
      : `count must be an integer ≥ 1 (got ${JSON.stringify(params.count)})`;
  },
  leakedQueue(service, params) {
    return service === 'prefill' ? Number(params.count) : 0;
  },
};
