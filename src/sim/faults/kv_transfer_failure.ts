// SGLang PD: the KV transfer from prefill to decode fails for a `rate` fraction of requests (a flaky RDMA link, a
// transfer engine that drops sessions). Both legs print their per-request failure line and count it in
// `sglang:num_transfer_failed_reqs_total` (srt/observability/metrics_collector.py@016d860
// increment_transfer_failed_reqs, called from disaggregation/prefill.py process_disagg_prefill_inflight_queue and
// decode.py pop_transferred), and the request fails with KVTransferError (mooncake/conn.py record_failure "Failed
// to get kvcache from prefill instance, it might be dead"). The vLLM variant is nixl_transfer_failure.
import type { FaultDef } from './types.js';

export const kvTransferFailure: FaultDef = {
  name: 'kv_transfer_failure',
  summary:
    'the KV transfer fails for a `rate` fraction of requests: `Prefill/Decode transfer failed … KVTransferError` lines, sglang:num_transfer_failed_reqs_total rising on both legs, the request fails',
  params: {
    rate: { default: 0.3, help: 'the fraction of requests whose KV transfer fails, in (0, 1]' },
  },
  validate(p) {
    const r = Number(p.rate);
    return Number.isFinite(r) && r > 0 && r <= 1
      ? undefined
      : `rate must be a number in (0, 1] (got ${JSON.stringify(p.rate)})`;
  },
  failsKvTransfer(p) {
    return Math.random() < Number(p.rate);
  },
};
