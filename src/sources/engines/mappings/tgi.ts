// Hugging Face Text Generation Inference: the router's metrics (docs reference/metrics, "TGI exposes multiple
// metrics ... via the /metrics Prometheus endpoint"; router/src/ in huggingface/text-generation-inference),
// exported through metrics-exporter-prometheus, so counters carry no `_total` suffix:
//   gauge      tgi_queue_size (requests waiting), tgi_batch_current_size (requests in the running batch),
//              tgi_batch_current_max_tokens
//   counter    tgi_request_count, tgi_request_success, tgi_request_failure
//   histogram  tgi_request_generated_tokens (its _sum is every generated token)
import { sumOf, type EngineMapping } from './types.js';

export const tgiMapping: EngineMapping = {
  name: 'tgi',
  families: [
    'tgi_batch_current_size',
    'tgi_queue_size',
    'tgi_request_success',
    'tgi_request_generated_tokens_sum',
  ],
  labels: [],
  detect: (samples) => samples.some((s) => s.name.startsWith('tgi_')),
  map: (s) => ({
    running: sumOf(s, ['tgi_batch_current_size']),
    queued: sumOf(s, ['tgi_queue_size']),
    finishedTotal: sumOf(s, ['tgi_request_success']),
    generatedTokensTotal: sumOf(s, ['tgi_request_generated_tokens_sum']),
  }),
};
