// vLLM only. The simulated server runs as a disaggregated decode (kv_consumer) instance whose NIXL KV reads
// from the prefill fail: vllm/distributed/kv_transfer/kv_connector/v1/nixl/worker.py (2026-03 → main 2026-08;
// nixl_connector.py before) _pop_done_transfers sees a transfer state other than DONE/PROC and calls
// `_log_failure(failure_type="transfer_failed", msg="Marking blocks as invalid", xfer_state=...)`, which logs
// `NIXL transfer failure: %s | Context: %s` at ERROR; `_handle_failed_transfer` records it in
// NixlKVConnectorStats (vllm:nixl_num_failed_transfers). Under the default kv_load_failure_policy the
// scheduler recomputes the invalid blocks, so the request still completes, later.
import type { FaultDef } from './types.js';

export const nixlTransferFailure: FaultDef = {
  name: 'nixl_transfer_failure',
  engines: ['vllm'],
  summary:
    'NIXL KV reads from the prefill fail for a `rate` fraction of requests: `NIXL transfer failure: transfer_failed` lines, vllm:nixl_num_failed_transfers, prefill recomputed',
  params: {
    rate: { default: 1, help: 'the fraction of requests whose KV transfer fails, in (0, 1]' },
  },
  validate(p) {
    const r = Number(p.rate);
    return Number.isFinite(r) && r > 0 && r <= 1
      ? undefined
      : `rate must be a number in (0, 1] (got ${JSON.stringify(p.rate)})`;
  },
  failsKvLoad(p) {
    return Math.random() < Number(p.rate);
  },
};
