// LMCache's own lines (LMCache/LMCache), the KV cache layer vLLM (LMCacheConnectorV1, and vLLM's copy of the adapter
// under vllm/distributed/kv_transfer/kv_connector/v1/lmcache_integration/) and SGLang run alike: its code, so its pack
// (issue 27 item 6; the retrieve rule was `vllm_lmcache_retrieve_short` in the `vllm` pack, which now brings this one
// along). LMCache prints through its own logger, `[time] LMCache LEVEL: message (file.py:N:module)` in 2025-2026
// builds (`LEVEL LMCache: message [time]` in 2024), so no rule is anchored to a prefix.
import type { RulePack } from './types.js';

export const lmcachePack: RulePack = {
  name: 'lmcache',
  engineLines: [],
  rules: [
    // LMCache's vLLM adapter (LMCache lmcache/integration/vllm/vllm_v1_adapter.py, and vLLM's copy
    // vllm/distributed/kv_transfer/kv_connector/v1/lmcache_integration/vllm_v1_adapter.py; index copies of both,
    // main 2026): after a retrieve, `The number of retrieved tokens is less than the expected number of tokens!
    // This should not happen!` (older) or `Request %s` glued in front (newer, which also reports the missing
    // blocks so vLLM's KV-load failure policy recomputes or fails them). Printed `LMCache ERROR: …`.
    {
      name: 'lmcache_retrieve_short',
      severity: 'warning',
      class: 'transfer_failure',
      upstream:
        'lmcache/integration/vllm/vllm_v1_adapter.py start_load_kv, vllm/distributed/kv_transfer/kv_connector/v1/lmcache_integration/vllm_v1_adapter.py (index copies, main 2026)',
      perRequest: 'rid',
      match: String.raw`(?:Request (?<rid>\S{1,256}?))?The number of retrieved tokens is less than the expected number of tokens!`,
    },
    // lmcache/v1/cache_engine.py LMCacheEngine.store (2025 → 2026; the index stores the path at
    // 3bafe17fbd0b153a56d6507e264d74097f0e8cc1, the wording read in its index copies and quoted in LMCache issue #969):
    // `logger.warning("Failed to allocate memory for the KV cache.\n" "The KV cache will not be stored.")`: the
    // local buffer is full, this request's KV is not offloaded (a later request recomputes it). A caught failure the
    // engine serves on: a warning. The message goes on over a second line (`The KV cache will not be stored. (…)`).
    {
      name: 'lmcache_store_alloc_failed',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'lmcache/v1/cache_engine.py LMCacheEngine.store (index copies 2025 → 2026, path at 3bafe17f)',
      match: String.raw`Failed to allocate memory for the KV cache\.(?: The KV cache will not be stored\.)?\s*$`,
    },
  ],
};
