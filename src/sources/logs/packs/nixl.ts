// SGLang NIXL KV-transfer signatures (disaggregation/nixl/conn.py and the shared disaggregation/common/conn.py),
// read from SGLang main (2026-08) with the wordings removed in 2026-05 kept for older builds.
import type { RulePack } from './types.js';

export const nixlPack: RulePack = {
  name: 'nixl',
  engineLines: [],
  rules: [
    // The key incident: the prefill bootstrap thread died on an unguarded ABORT frame (builds with PR #27372
    // and without #30352, 2026-06 → 2026-07). threading.excepthook prints the header on stderr (unprefixed
    // for SGLang, `(Proc pid=N) ` or a container prefix elsewhere); the assertion is the traceback's last line.
    // nixl/conn.py NixlKVManager._start_bootstrap_thread: `assert waiting_req_bytes[0] == GUARD, f"First
    // message should be {GUARD}. Foreign traffic?"`.
    {
      name: 'nixl_bootstrap_thread_dead',
      severity: 'critical',
      class: 'kv_bootstrap_dead',
      upstream:
        'disaggregation/nixl/conn.py bootstrap_thread (2025-05 → 2026-08; ABORT frames 2026-06 → 2026-07)',
      incident: 'thread_death',
      // Bounded and greedy where the line is free text (issue 24: `.+?` and `.*?\s*$` were quadratic).
      match: String.raw`Exception in thread (?<thread>.{1,200}?) \((?<target>bootstrap_thread)\):\s*$`,
      follows: {
        match: String.raw`(?<exception>AssertionError): (?<message>First message should be b'NixlMsgGuard'.*\S)\s*$`,
        within: 30,
      },
    },
    // The assertion alone, for when the header went to another stream; absorbed by the record above.
    {
      name: 'nixl_guard_assertion',
      severity: 'critical',
      class: 'kv_bootstrap_dead',
      upstream: 'disaggregation/nixl/conn.py bootstrap_thread GUARD assert (2025-05 → 2026-08)',
      incident: 'thread_death',
      match: String.raw`AssertionError: First message should be b'NixlMsgGuard'`,
    },
    // nixl/conn.py transfer_worker (2026-03 → 2026-05, replaced by transfer_infos.get in PR #35281): a bare
    // assert inside a try the worker catches (`Unexpected transfer worker error for room N` + traceback).
    {
      name: 'nixl_transfer_infos_assert',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'disaggregation/nixl/conn.py transfer_worker (2026-03 → 2026-05)',
      incident: 'nixl_transfer_worker',
      match: String.raw`assert room in self\.transfer_infos`,
    },
    // nixl/conn.py transfer_worker logger.exception (2026-03 → 2026-08): caught, the room is marked failed.
    {
      name: 'nixl_unexpected_transfer_worker_error',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'disaggregation/nixl/conn.py transfer_worker (2026-03 → 2026-08)',
      incident: 'nixl_transfer_worker',
      perRequest: 'room',
      match: String.raw`Unexpected transfer worker error for room (?<room>\d+)`,
    },
    {
      name: 'nixl_transport_error',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'disaggregation/nixl/conn.py transfer_worker (2026-03 → 2026-08)',
      perRequest: 'room',
      match: String.raw`NIXL transport error for room (?<room>\d+)`,
    },
    // common/conn.py CommonKVReceiver heartbeat checker _handle_node_failure (2026-05 → 2026-08):
    // `Lost connection with prefill instance (bootstrap_addr: {addr}), {n} requests affected`, printed once the
    // heartbeat missed SGLANG_DISAGGREGATION_HEARTBEAT_MAX_FAILURE times; nixl/conn.py (≤ 2026-05) ended in
    // `transfers affected`. Every request bound to that prefill fails: critical.
    {
      name: 'nixl_lost_prefill_connection',
      severity: 'critical',
      class: 'connection_lost',
      upstream:
        'disaggregation/common/conn.py _handle_node_failure (2026-05 → 2026-08), nixl/conn.py (≤ 2026-05)',
      match: String.raw`Lost connection with prefill instance \(bootstrap_addr: (?<addr>[^)\s]*)\)(?:, (?<affected>\d+) (?:requests|transfers) affected)?`,
    },
    // common/conn.py try_ensure_parallel_info / _get_prefill_parallel_info_from_server (2025-09 → 2026-08):
    // `Error fetching prefill server info from bootstrap: {e}` (newer builds add `after {n} attempts`).
    {
      name: 'nixl_prefill_info_fetch_failed',
      severity: 'warning',
      class: 'connection_lost',
      upstream: 'disaggregation/common/conn.py try_ensure_parallel_info (2025-09 → 2026-08)',
      match: String.raw`Error fetching prefill server info(?:.*? after (?<attempts>\d+) attempts)?`,
    },
    // nixl/conn.py send_metadata (≤ 2025-09), before the common receiver took over.
    {
      name: 'nixl_prefill_info_unreachable',
      severity: 'warning',
      class: 'connection_lost',
      upstream: 'disaggregation/nixl/conn.py send_metadata (2025-05 → 2025-09)',
      match: String.raw`Could not fetch prefill parallel info from bootstrap_addr`,
    },
    // Removed upstream in 2026-05 (heartbeat rewrite); kept for older builds.
    {
      name: 'nixl_room_failed_prefill_down',
      severity: 'warning',
      class: 'connection_lost',
      upstream: 'disaggregation/nixl/conn.py _handle_node_failure (2025-06 → 2026-05, removed)',
      perRequest: 'room',
      match: String.raw`Let room (?<room>\d+) be failed due to prefill down`,
    },
    {
      name: 'nixl_transfer_node_failure',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'disaggregation/nixl/conn.py NixlKVReceiver.poll (2025-06 → 2026-05, removed)',
      perRequest: 'room',
      match: String.raw`Transfer for room (?<room>\d+) failed due to node failure`,
    },
    {
      name: 'nixl_waiting_timeout',
      severity: 'warning',
      class: 'transfer_timeout',
      upstream: 'disaggregation/nixl/conn.py NixlKVReceiver.poll (2025-06 → 2026-05, removed)',
      perRequest: 'room',
      match: String.raw`Request (?<room>\d+) waiting_timeout`,
    },
  ],
};
