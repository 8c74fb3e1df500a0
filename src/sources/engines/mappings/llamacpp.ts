// llama.cpp server (`llama-server --metrics`): ggml-org/llama.cpp tools/server/server-context.cpp, the
// get_metrics handler, prints every name with the `llamacpp:` prefix:
//   counter  llamacpp:prompt_tokens_total, llamacpp:prompt_seconds_total, llamacpp:tokens_predicted_total,
//            llamacpp:tokens_predicted_seconds_total, llamacpp:n_decode_total, llamacpp:n_tokens_max,
//            llamacpp:n_busy_slots_per_decode
//   gauge    llamacpp:prompt_tokens_seconds, llamacpp:predicted_tokens_seconds,
//            llamacpp:requests_processing (slots busy), llamacpp:requests_deferred (tasks waiting for a slot)
// Older builds (tools/server/server.cpp, 2024–mid 2025) also print the gauge llamacpp:kv_cache_usage_ratio
// ("1 means 100 percent usage") and llamacpp:kv_cache_tokens. There is no finished-requests counter.
//
// Progress is the decode loop, not tokens_predicted_total: that counter is added to when a request *ends*
// (tools/server/server-context.cpp update_slots: `send_final_response(slot); metrics.on_prediction(slot);` once the
// stop condition is met, @001d906a; examples/server/server.cpp did the same before the split), so two slots on long generations showed no progress for minutes while
// tokens flowed (issue 38: busy read as engine_stalled). `n_decode_total` counts llama_decode() calls and moves
// every step; the gauge `n_busy_slots_per_decode` is printed as `n_busy_slots_total / max(n_decode_total, 1)`
// (ggml-org/llama.cpp tools/server/server-context.cpp, the /metrics handler, @001d906a; the same formula in
// examples/server/server.cpp before), so
// their product is n_busy_slots_total: one count per busy slot per decode step — a generating slot's token, a
// prompt batch's step. That is the token count progress and the per-request rate (crawl) read; tokens_predicted_total
// only when a build prints no n_decode_total. The gauge is printed with 6 significant digits: the product can come
// back a few counts lower than the scrape before, which reads as no progress for that scrape, never as a restart
// (a restart starts n_decode_total over, far lower).
import type { Sample } from '../promtext.js';
import { sumOf, type EngineMapping } from './types.js';

/** n_busy_slots_total, rebuilt from the decode counter and the lifetime average (see above). */
function busySlotSteps(s: Sample[]): number | undefined {
  const decodes = sumOf(s, ['llamacpp:n_decode_total']);
  const perDecode = sumOf(s, ['llamacpp:n_busy_slots_per_decode']);
  if (decodes === undefined || perDecode === undefined || decodes <= 0) return undefined;
  return Math.round(decodes * perDecode);
}

export const llamacppMapping: EngineMapping = {
  name: 'llamacpp',
  families: [
    'llamacpp:requests_processing',
    'llamacpp:requests_deferred',
    'llamacpp:n_decode_total',
    'llamacpp:n_busy_slots_per_decode',
    'llamacpp:tokens_predicted_total',
    'llamacpp:kv_cache_usage_ratio',
  ],
  labels: [],
  detect: (samples) => samples.some((s) => s.name.startsWith('llamacpp:')),
  map: (s) => ({
    // The slots processing (server-task.cpp:1578 @80fb11a): llama.cpp's running count.
    running: sumOf(s, ['llamacpp:requests_processing']),
    queued: sumOf(s, ['llamacpp:requests_deferred']),
    generatedTokensTotal: busySlotSteps(s) ?? sumOf(s, ['llamacpp:tokens_predicted_total']),
    // Progress while every slot is held by a long generation: tokens_predicted_total waits for a request to end
    // (issue 38: both slots busy read as engine_stalled), n_decode_total counts each llama_decode call.
    decodeStepsTotal: sumOf(s, ['llamacpp:n_decode_total']),
    tokenUsage: sumOf(s, ['llamacpp:kv_cache_usage_ratio']),
  }),
};
