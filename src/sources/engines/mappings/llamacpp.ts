// llama.cpp server (`llama-server --metrics`): ggml-org/llama.cpp tools/server/server-context.cpp, the
// get_metrics handler, prints every name with the `llamacpp:` prefix:
//   counter  llamacpp:prompt_tokens_total, llamacpp:prompt_seconds_total, llamacpp:tokens_predicted_total,
//            llamacpp:tokens_predicted_seconds_total, llamacpp:n_decode_total, llamacpp:n_tokens_max,
//            llamacpp:n_busy_slots_per_decode
//   gauge    llamacpp:prompt_tokens_seconds, llamacpp:predicted_tokens_seconds,
//            llamacpp:requests_processing (slots busy), llamacpp:requests_deferred (tasks waiting for a slot)
// Older builds (tools/server/server.cpp, 2024–mid 2025) also print the gauge llamacpp:kv_cache_usage_ratio
// ("1 means 100 percent usage") and llamacpp:kv_cache_tokens. There is no finished-requests counter:
// progress is tokens_predicted_total (and n_decode_total, which moves with every decode step).
import { sumOf, type EngineMapping } from './types.js';

export const llamacppMapping: EngineMapping = {
  name: 'llamacpp',
  families: [
    'llamacpp:requests_processing',
    'llamacpp:requests_deferred',
    'llamacpp:tokens_predicted_total',
    'llamacpp:n_decode_total',
    'llamacpp:kv_cache_usage_ratio',
  ],
  labels: [],
  detect: (samples) => samples.some((s) => s.name.startsWith('llamacpp:')),
  map: (s) => ({
    running: sumOf(s, ['llamacpp:requests_processing']),
    queued: sumOf(s, ['llamacpp:requests_deferred']),
    generatedTokensTotal: sumOf(s, ['llamacpp:tokens_predicted_total']),
    // Progress while every slot is held by a long generation: tokens_predicted_total waits for a request to end
    // (issue 38: both slots busy read as engine_stalled), n_decode_total counts each llama_decode call.
    decodeStepsTotal: sumOf(s, ['llamacpp:n_decode_total']),
    tokenUsage: sumOf(s, ['llamacpp:kv_cache_usage_ratio']),
  }),
};
