// SGLang PD: entries stranded in decode's transfer queue (their KV never arrives and no timeout pops them: a
// transfer whose completion notice was lost) while traffic keeps flowing. The queue moves with the traffic but
// never drops below the stranded count: `sglang:num_decode_transfer_queue_reqs` and `#transfer-req` of the decode
// batch lines (scheduler_metrics_mixin.py log_decode_stats) keep a floor. Unlike queue_leak the engine is busy.
import type { FaultDef } from './types.js';

export const strandedQueueEntry: FaultDef = {
  name: 'stranded_queue_entry',
  summary: "entries stranded in decode's transfer queue: its floor stays above zero under continuous traffic",
  params: { count: { default: 1, help: 'stranded entries (1 or more)' } },
  validate(p) {
    const n = Number(p.count);
    return Number.isInteger(n) && n >= 1
      ? undefined
      : `count must be an integer ≥ 1 (got ${JSON.stringify(p.count)})`;
  },
  strandedQueue(service, p) {
    return service === 'decode' ? Number(p.count) : 0;
  },
};
