// SGLang's disaggregation common code (python/sglang/srt/disaggregation/common/conn.py), which the NIXL and Mooncake
// backends both run: the decode side's heartbeat to the prefill bootstrap server, the bootstrap server's routes
// (`/route`, `/register_dp_rank`, `/query_dp_ranks`) and the PD true-retraction rebootstrap. Read from
// sgl-project/sglang common/conn.py at 0094505da74125a31ceb354f37ae7a1b6a97d3f5 (main 2026-08; functions named below
// at that commit). `read at …` in an `upstream` marks a wording only checked at that commit, not in older builds. Before issue 27 the first two rules lived in the `nixl` pack, so a Mooncake deployment
// missed them; `nixl`, `mooncake` and `sglang` now bring this pack along (src/config/log-packs.ts IMPLIED_PACKS).
import type { RulePack } from './types.js';

export const sglangDisaggPack: RulePack = {
  name: 'sglang_disagg',
  engineLines: [],
  rules: [
    // common/conn.py CommonKVManager._handle_node_failure (2026-05 → 2026-08): `Lost connection with prefill
    // instance (bootstrap_addr: {addr}), {n} requests affected`, printed once the heartbeat missed
    // SGLANG_DISAGGREGATION_HEARTBEAT_MAX_FAILURE times; nixl/conn.py (≤ 2026-05) ended in `transfers affected`.
    // Every request bound to that prefill fails: critical. Was `nixl_lost_prefill_connection`.
    {
      name: 'sglang_disagg_lost_prefill_connection',
      severity: 'critical',
      class: 'connection_lost',
      upstream:
        'disaggregation/common/conn.py _handle_node_failure (2026-05 → 2026-08), nixl/conn.py (2025-06 → 2026-05)',
      match: String.raw`Lost connection with prefill instance \(bootstrap_addr: (?<addr>[^)\s]*)\)(?:, (?<affected>\d+) (?:requests|transfers) affected)?`,
    },
    // common/conn.py try_ensure_parallel_info (2025-09 → 2026-08): `Error fetching prefill server info from
    // bootstrap: {e}`; decode.py's retry loop retries it (newer builds add `after {n} attempts`). Was
    // `nixl_prefill_info_fetch_failed`.
    {
      name: 'sglang_disagg_prefill_info_fetch_failed',
      severity: 'warning',
      class: 'connection_lost',
      upstream: 'disaggregation/common/conn.py try_ensure_parallel_info (2025-09 → 2026-08)',
      match: String.raw`Error fetching prefill server info(?:.*? after (?<attempts>\d+) attempts)?`,
    },
    // disaggregation/decode.py DecodePreallocQueue, the prefill-info retry loop (`_max_ensure_retries`; read in the
    // index copy of main 2026, commit not stated by the index): `Could not fetch prefill parallel info from
    // {bootstrap_addr} after {count} attempts`, then every waiting request of that prefill is aborted. The final
    // give-up on a prefill that never answered: critical.
    {
      name: 'sglang_disagg_prefill_info_gave_up',
      severity: 'critical',
      class: 'connection_lost',
      upstream: 'disaggregation/decode.py prefill-info retry give-up (main 2026; older builds not checked)',
      match: String.raw`Could not fetch prefill parallel info from (?!bootstrap_addr)(?<addr>\S{1,300}) after (?<attempts>\d+) attempts`,
    },
    // common/conn.py try_ensure_parallel_info and :1186 _get_bootstrap_info_from_server: the readiness gate.
    // The bootstrap server answers 503 `Prefill server not fully registered yet ({n} workers registered).` (_handle_route_get)
    // until every prefill rank registered; the decode retries.
    {
      name: 'sglang_disagg_prefill_not_registered',
      severity: 'warning',
      class: 'connection_lost',
      upstream: 'disaggregation/common/conn.py _handle_route_get readiness gate (read at 0094505d)',
      match: String.raw`Failed to get prefill server info: 503, Prefill server not fully registered yet \((?<registered>\d+) workers registered\)`,
    },
    // common/conn.py (route fetches): `Failed to get prefill server info: {status}, {text}` (any other
    // status) and `Error fetching prefill info from bootstrap: {e}` (no answer). The request's bootstrap fails.
    {
      name: 'sglang_disagg_route_fetch_failed',
      severity: 'warning',
      class: 'connection_lost',
      upstream: 'disaggregation/common/conn.py _get_bootstrap_info_from_server (read at 0094505d)',
      match: String.raw`Failed to get prefill server info: (?!503, Prefill server not fully registered)(?<status>\d+)|Error fetching prefill info from bootstrap: `,
    },
    // common/conn.py CommonKVSender._register_prefill_dp_rank (read at 0094505d): `Failed to register
    // prefill dp_rank: {status}, {text}` or `…: {e}`. The decode cannot learn this request's prefill DP rank.
    {
      name: 'sglang_disagg_register_dp_rank_failed',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'disaggregation/common/conn.py _register_prefill_dp_rank (read at 0094505d)',
      match: String.raw`Failed to register prefill dp_rank: `,
    },
    // common/conn.py CommonKVReceiver.query_prefill_dp_ranks (read at 0094505d): `Failed to query
    // dp_ranks: {status}, {text}` / `Error querying dp_ranks from bootstrap: {e}`; the batch is retried.
    {
      name: 'sglang_disagg_query_dp_ranks_failed',
      severity: 'warning',
      class: 'connection_lost',
      upstream: 'disaggregation/common/conn.py query_prefill_dp_ranks (read at 0094505d)',
      match: String.raw`Failed to query dp_ranks: |Error querying dp_ranks from bootstrap: `,
    },
    // common/conn.py register_to_bootstrap (read at 0094505d): each retried attempt
    // `Prefill register attempt {i}/{n} failed: …`, then `Prefill instance failed to register to bootstrap server
    // after {n} retries`: that prefill rank is missing from the route table, so no decode ever bootstraps with it.
    {
      name: 'sglang_disagg_prefill_register_retry',
      severity: 'warning',
      class: 'connection_lost',
      upstream: 'disaggregation/common/conn.py register_to_bootstrap retry (read at 0094505d)',
      match: String.raw`Prefill register attempt (?<attempt>\d+)/(?<max>\d+) failed`,
    },
    {
      name: 'sglang_disagg_prefill_register_failed',
      severity: 'critical',
      class: 'connection_lost',
      upstream: 'disaggregation/common/conn.py register_to_bootstrap give-up (read at 0094505d)',
      match: String.raw`Prefill instance failed to register to bootstrap server after (?<retries>\d+) retries`,
    },
    // common/conn.py _run_prefill_recompute (read at 0094505d): the rebootstrap of a retracted request
    // (`PD rebootstrap prefill failed for rid=%s status=%s body=%s`, `PD rebootstrap prefill request failed for
    // rid=%s` + traceback). The request is aborted through KVPoll.Failed; the engine serves on.
    {
      name: 'sglang_disagg_rebootstrap_failed',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'disaggregation/common/conn.py _run_prefill_recompute (read at 0094505d)',
      perRequest: 'rid',
      match: String.raw`PD rebootstrap prefill (?:request )?failed for rid=(?<rid>[^\s,]{1,256})`,
    },
    // common/conn.py submit_prefill_recompute (read at 0094505d): `PD retract rebootstrap could not resolve
    // the prefill /generate URL from bootstrap info (rid=%s bootstrap_room=%s bootstrap_addr=%s).`
    {
      name: 'sglang_disagg_rebootstrap_unresolved',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'disaggregation/common/conn.py submit_prefill_recompute (read at 0094505d)',
      perRequest: 'rid',
      match: String.raw`PD retract rebootstrap could not resolve the prefill /generate URL from bootstrap info \(rid=(?<rid>[^\s)]{1,256})`,
    },
  ],
};
