// vLLM only. Queued requests are never admitted while other requests run and finish: the KV pool is held full by
// requests that keep arriving ahead of them (or they wait for a KV cache tier / offload connector that never
// answers). New requests from clients stay WAITING (`vllm:num_requests_waiting`, reason capacity); `background`
// other users' requests run, make tokens and finish, and are replaced at once, so the token counter, the
// inter-token latency and `vllm:request_success_total` keep moving, and `vllm:request_queue_time_seconds` (observed
// as each request finishes: vllm/v1/metrics/loggers.py @005a810b PrometheusStatLogger.record) sees only their
// near-zero waits. `queued` more of them wait beside ours. Disabling it admits the queue.
import type { FaultDef } from './types.js';

export const queueStarvation: FaultDef = {
  name: 'queue_starvation',
  engines: ['vllm'],
  summary:
    'requests queue and are never admitted while `background` other requests run, make tokens and finish (a full KV pool, a cache tier that never answers)',
  params: {
    background: { default: 2, help: 'other requests kept running (each replaced as it finishes), 1 to 64' },
    queued: { default: 2, help: "other requests waiting beside the clients' own, 0 to 1000" },
  },
  validate(p) {
    const b = Number(p.background);
    const q = Number(p.queued);
    if (!Number.isInteger(b) || b < 1 || b > 64) return `background must be an integer from 1 to 64`;
    if (!Number.isInteger(q) || q < 0 || q > 1000) return `queued must be an integer from 0 to 1000`;
    return undefined;
  },
  starvesQueue(p) {
    return { background: Number(p.background), queued: Number(p.queued) };
  },
};
