// LMCache's own lines (LMCache/LMCache), the KV cache layer vLLM (LMCacheConnectorV1, and vLLM's copy of the adapter
// under vllm/distributed/kv_transfer/kv_connector/v1/lmcache_integration/) and SGLang run alike: its code, so its pack
// (issue 27 item 6; the retrieve rule was `vllm_lmcache_retrieve_short` in the `vllm` pack, which now brings this one
// along). LMCache prints through its own logger, `[time] LMCache LEVEL: message (file.py:N:module)` in 2025-2026
// builds (`LEVEL LMCache: message [time]` in 2024), so only the ping rule (whose words are common ones) starts at
// the prefix.
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
    // The L2 tier (LMCache's distributed storage manager, multiprocess mode): lmcache/v1/distributed/storage_controllers/
    // store_controller.py StoreController._advance_request (at 00c5e6463a0473cb5635b927d62c19ed97accb6a), when an L2
    // adapter (remote, FS, Mooncake store, NIXL store, S3, …) reports a store task failed: `logger.warning("Store request
    // %d to adapter %d failed for keys: %s", request.request_id, adapter_index, request.keys)`; older index copies of the
    // same function say `Store task %d to adapter %d failed for keys: %s` (the wording LMCache issue #5123 quotes).
    // _submit_l2_store: `logger.exception("submit_store_task raised for adapter %d, request %d — aborting", …)` when the
    // adapter refuses the task outright. The keys stay in L1 and are not in L2: a later request misses them and
    // recomputes. Caught, the engine serves on: a warning. The keys (hashes) come after the words, never in the match.
    {
      name: 'lmcache_l2_store_failed',
      severity: 'warning',
      class: 'cache_tier_unavailable',
      upstream:
        'lmcache/v1/distributed/storage_controllers/store_controller.py _advance_request, _submit_l2_store (at 00c5e646; `Store task` wording in older index copies)',
      match: String.raw`Store (?:request|task) (?<task>\d{1,12}) to adapter (?<adapter>\d{1,6}) failed for keys: |submit_store_task raised for adapter \d{1,6}, request \d{1,12} `,
    },
    // The remote tier (RemoteBackend, remote_url set): lmcache/v1/storage_backend/remote_backend.py init_connection
    // (index copy at 009eca101c71ae583489ed4bc616c589f2edcdf7): `logger.warning(f"Failed to initialize/re-establish remote
    // connection: {e}")`; the backend runs without its remote store (every contains/get/put then logs `Connection is
    // None in …` and returns nothing) and tries again no sooner than 10 s later. Retried: a warning.
    {
      name: 'lmcache_remote_connect_failed',
      severity: 'warning',
      class: 'cache_tier_unavailable',
      upstream:
        'lmcache/v1/storage_backend/remote_backend.py RemoteBackend.init_connection (index copy at 009eca10)',
      match: String.raw`Failed to initialize/re-establish remote connection: `,
    },
    // lmcache/v1/storage_backend/remote_monitor.py RemoteMonitor.run_loop (index copy at
    // 0e65d2fc0ec3975c78c3ce33a48e81505f315a21), every ping_interval (30 s): `logger.warning(f"Ping failed with error
    // code: {error_code}")`, `logger.warning("Ping timeout")`, `logger.error(f"Ping error: {e}")`; on any of them the
    // monitor swaps the remote connector for a blackhole one (puts dropped, gets miss) until a ping succeeds. The words
    // are common ones, so the match starts at LMCache's own record prefix (lmcache/logging.py build_format:
    // `[%(asctime)s] LMCache %(levelname)s:` then, in colour, a reset code), which its logger always prints (its
    // handler is its own, propagate=False: a JSON-logging engine leaves it as it is). A warning: retried every ping.
    {
      name: 'lmcache_remote_ping_failed',
      severity: 'warning',
      class: 'cache_tier_unavailable',
      upstream:
        'lmcache/v1/storage_backend/remote_monitor.py RemoteMonitor.run_loop (index copy at 0e65d2fc), prefix lmcache/logging.py',
      match: String.raw`LMCache (?:WARNING|ERROR):(?:\x1b\[0m)? Ping failed with error code: (?<code>-?\d{1,6})|LMCache WARNING:(?:\x1b\[0m)? Ping timeout(?: |$)|LMCache ERROR:(?:\x1b\[0m)? Ping error: `,
    },
  ],
};
