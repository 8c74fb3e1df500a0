// NVIDIA Dynamo's HTTP frontend: ai-dynamo/dynamo lib/runtime/src/metrics/prometheus_names.rs, module
// frontend_service, with the prefix name_prefix::FRONTEND = "dynamo_frontend" (labels model, …):
//   gauge    dynamo_frontend_inflight_requests ("inflight/concurrent requests going to the engine"),
//            dynamo_frontend_queued_requests ("waiting in HTTP queue before receiving the first response"),
//            dynamo_frontend_worker_active_decode_blocks (per worker), dynamo_frontend_model_total_kv_blocks
//   counter  dynamo_frontend_requests_total (labels status = success | error, …),
//            dynamo_frontend_output_tokens_total ("updates in real-time")
// Queued requests are also in flight, so running is inflight − queued.
import { sumOf, type EngineMapping } from './types.js';

export const dynamoMapping: EngineMapping = {
  name: 'dynamo',
  families: [
    'dynamo_frontend_inflight_requests',
    'dynamo_frontend_queued_requests',
    'dynamo_frontend_worker_active_decode_blocks',
    'dynamo_frontend_model_total_kv_blocks',
    'dynamo_frontend_requests_total',
    'dynamo_frontend_output_tokens_total',
  ],
  labels: ['status'],
  detect: (samples) => samples.some((s) => s.name.startsWith('dynamo_frontend_')),
  map: (s) => {
    const inflight = sumOf(s, ['dynamo_frontend_inflight_requests']);
    const queued = sumOf(s, ['dynamo_frontend_queued_requests']);
    const used = sumOf(s, ['dynamo_frontend_worker_active_decode_blocks']);
    const blocks = sumOf(s, ['dynamo_frontend_model_total_kv_blocks']);
    return {
      running: inflight === undefined ? undefined : Math.max(0, inflight - (queued ?? 0)),
      queued,
      // Errors finish too, but a wedge produces nothing but errors: only successes are progress.
      finishedTotal: sumOf(s, ['dynamo_frontend_requests_total'], (x) => x.labels.status === 'success'),
      generatedTokensTotal: sumOf(s, ['dynamo_frontend_output_tokens_total']),
      tokenUsage: used !== undefined && blocks !== undefined && blocks > 0 ? used / blocks : undefined,
    };
  },
};
